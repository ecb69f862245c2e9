// `npm run openapi`: writes the OpenAPI document the server serves at /api/v1/openapi.json to
// docs/openapi.json (indented by two spaces, one trailing newline), the contract file other projects
// generate clients and mocks from. The document comes from the route schemas alone (src/api/openapi), so a
// server on an empty in-memory store serves the same one as every other; test/api/openapi.test.ts fails
// while the committed file differs from it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp } from '../src/server/app.ts';
import { openStore } from '../src/store/index.ts';

const file = join(import.meta.dirname, '../docs/openapi.json');
const store = await openStore(':memory:');
// The secret keys cursors and user ids, none of which the document holds.
const app = buildApp({ store, secret: 'openapi document '.repeat(4), logLevel: 'silent' });
try {
  await app.ready();
  writeFileSync(file, `${JSON.stringify(app.swagger(), null, 2)}\n`);
  console.log(`wrote ${file}`);
} finally {
  await app.close();
  await store.close();
}

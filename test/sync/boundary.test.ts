// docs/design.md "Architecture": the sync engine is a consumer of the API like any other. It builds on the client
// and its own store (better-sqlite3), never on the server's code; dependency-cruiser checks every import
// statically (.dependency-cruiser.cjs), and this file checks what loading the engine resolves.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../helpers/harness.ts';
import { modulesResolvedBy } from '../helpers/resolved-modules.ts';

test('loading the sync engine resolves no module of the server: only the client and its own', async () => {
  const resolved = await modulesResolvedBy(join(ROOT, 'src/sync/engine.ts'));
  const inside = (folder: string) => (url: string) =>
    url.startsWith(`${pathToFileURL(join(ROOT, folder)).href}/`);
  const project = resolved.filter((url) => inside('src')(url) || inside('packages')(url));
  assert.ok(project.some(inside('src/sync')), 'the hook saw the sync modules');
  assert.ok(project.some(inside('packages/client/src')), 'the hook saw the client modules');
  assert.deepEqual(
    project.filter((url) => !inside('src/sync')(url) && !inside('packages/client/src')(url)),
    [],
  );
});

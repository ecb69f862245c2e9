// Every id and token the store makes is one a command line takes as it is: none begins with '-', which
// `chessport tokens revoke <id>` and other tools read as an option (docs/cli.md "Ids that begin with '-'").
// Grant ids are base64url, which has '-': one in 64 of the OAuth library's own would begin with it.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { gameId } from '../../src/store/game-id.ts';
import { newGrantId, type Store } from '../../src/store/index.ts';
import { prefixedId } from '../../src/store/webhook-endpoints.ts';
import { openTestStore, type TestStore } from '../helpers/dialects.ts';

/** Enough that a generator with one id in 64 beginning with '-' makes one: it fails with (63/64)^4096 ≈ 1e-28. */
const MANY = 4096;

const many = (make: () => string) => Array.from({ length: MANY }, make);

function noneDashed(ids: string[], what: string): void {
  const dashed = ids.filter((id) => id.startsWith('-'));
  assert.deepEqual(dashed, [], `${what} that begin with '-'`);
  assert.equal(new Set(ids).size, ids.length, `${what} repeat`);
}

test('grant ids: 256 random bits in 43 base64url characters, never beginning with "-"', () => {
  const ids = many(newGrantId);
  noneDashed(ids, 'grant ids');
  for (const id of ids) {
    assert.match(id, /^[A-Za-z0-9_][A-Za-z0-9_-]{42}$/);
    const bytes = Buffer.from(id, 'base64url');
    assert.equal(bytes.length, 32, id);
    assert.equal(bytes.toString('base64url'), id, `${id} is the canonical form of its bits`);
  }
  // The first character is any of the 63 others: drawing again drops '-', not a range of them.
  assert.equal(new Set(ids.map((id) => id[0])).size, 63);
});

test('webhook endpoint and delivery ids, game ids', () => {
  noneDashed(
    many(() => prefixedId('ep')),
    'endpoint ids',
  );
  noneDashed(
    many(() => prefixedId('msg')),
    'delivery ids',
  );
  noneDashed(many(gameId), 'game ids');
});

let t: TestStore;
let store: Store;
before(async () => {
  t = await openTestStore('sqlite');
  store = t.store;
});
after(async () => {
  await t?.close();
});

test('what the store hands out: users, apps, tokens and their ids, databases, webhook endpoints', async () => {
  const made: Record<string, string[]> = {};
  const keep = (what: string, id: string) => {
    made[what] ??= [];
    made[what].push(id);
  };
  for (let i = 0; i < 128; i++) {
    const user = await store.accounts.addUser({ login: `user-${i}` });
    const app = await store.accounts.addApp({ name: `app-${i}` });
    const token = await store.tokens.issue({
      userId: user.id,
      appId: app.id,
      scopes: ['games.read'],
      expiresAt: null,
    });
    const database = await store.databases.add({
      ownerId: user.id,
      name: `db ${i}`,
      private: false,
      maxGames: null,
    });
    const { endpoint } = await store.webhooks.endpoints.add({
      appId: app.id,
      url: 'https://hooks.example.org/',
    });
    keep('user ids', user.id);
    keep('app ids (client ids)', app.id);
    keep('token ids', token.id);
    keep('tokens', token.token);
    keep('database ids', database.id);
    keep('database slugs', database.slug);
    keep('endpoint ids', endpoint.id);
  }
  for (const [what, ids] of Object.entries(made)) noneDashed(ids, what);
});

// docs/design.md 18 and 21 when clocks disagree. A change's updatedAt comes from the clock of the process
// that writes it (Date.now in a CLI command), and writers run on other machines, or after the clock stepped.
// The store's write transactions keep the change time from going back (the latest one is reused), so
// updatedAt rises with the feed, and `since` (a binary search that needs exactly that, store.feed.positionAt)
// starts at the right change. Here CLI writer processes run with their clock an hour ahead or behind (a
// preloaded module shifts Date.now), on either store: the other tests' writers all share one clock, so none
// of them could tell.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { type Change, type FeedPage, numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import {
  cli,
  cliJson,
  type Env,
  http,
  importPgn,
  issueToken,
  type Server,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';

const HOUR = 3600_000;

let env: Env;
let server: Server;
let token: string;

before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'follower']);
  token = await issueToken(env, 'alice', 'follower', 'games.read');
  server = await startServer(env);
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

/** The environment of a CLI command whose clock is offsetMs off. */
function skewed(offsetMs: number): Env {
  const module = join(env.dir, 'clock.mjs');
  writeFileSync(
    module,
    'const now = Date.now; const offset = Number(process.env.CLOCK_OFFSET_MS); Date.now = () => now() + offset;\n',
  );
  const options = `${env.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(module).href}`.trim();
  return { ...env, env: { ...env.env, NODE_OPTIONS: options, CLOCK_OFFSET_MS: String(offsetMs) } };
}

async function drain(start: { since?: string }, limit = 2): Promise<Change[]> {
  const items: Change[] = [];
  let query = new URLSearchParams({ ...start, limit: String(limit) });
  for (;;) {
    const res = await http<FeedPage>(`${server.base}/api/v1`, `/changes?${query}`, { token });
    assert.equal(res.status, 200, res.text);
    items.push(...res.json.data);
    if (!res.json.hasMore) return items;
    query = new URLSearchParams({ cursor: res.json.nextCursor, limit: String(limit) });
  }
}

const ok = async (target: Env, args: string[]) => {
  const result = await cli(target, args);
  assert.equal(result.code, 0, `chessport ${args.join(' ')}: ${result.stderr}`);
};

test('writers with clocks an hour ahead and behind: updatedAt never goes back along the feed, since starts right', async () => {
  const file = (name: string, n: number) => writePgn(env.dir, `${name}.pgn`, numberedGames(name, n));
  const main = await importPgn(env, file('Seed', 4), 'alice', 'Main');
  const afterSeed = new Date(Date.now() + 1).toISOString();
  const seed = await drain({});

  await importPgn(skewed(HOUR), file('Ahead', 2), 'alice', main.slug);
  const ahead = (await drain({})).slice(seed.length);
  const aheadTime = ahead[0]?.updatedAt as string;
  assert.ok(Date.parse(aheadTime) > Date.now() + HOUR / 2, `the writer's clock was ahead: ${aheadTime}`);

  // Then writers on the right clock and on one an hour behind: an import, an update, a move, a delete.
  await importPgn(env, file('OnTime', 2), 'alice', main.slug);
  const behind = skewed(-HOUR);
  const [first, second, third] = seed.map((c) => c.id) as [string, string, string, string];
  const update = writePgn(env.dir, 'update.pgn', [{ white: 'Updated Behind', black: 'X', result: '0-1' }]);
  await ok(behind, ['games', 'update', first, update]);
  await ok(behind, ['databases', 'add', 'Other', '--user', 'alice']);
  await ok(behind, ['games', 'move', second, '--database', 'Other']);
  await ok(behind, ['games', 'delete', third]);

  const whole = await drain({});
  assert.equal(whole.length, 8);
  for (let i = 1; i < whole.length; i++) {
    const [earlier, later] = [whole[i - 1] as Change, whole[i] as Change];
    assert.ok(
      later.updatedAt >= earlier.updatedAt,
      `updatedAt goes back: ${later.updatedAt} after ${earlier.updatedAt}`,
    );
  }
  const detail = await http<{ data: { updatedAt: string } }>(`${server.base}/api/v1`, `/games/${first}`, {
    token,
  });
  assert.equal(detail.json.data.updatedAt, whole.find((c) => c.id === first)?.updatedAt);

  // Everything after the seed changed at or after the ahead writer's time, whichever clock wrote it; the
  // one seed game left alone did not.
  assert.equal(whole[0]?.white.name, 'Seed White 4');
  const afterAhead = whole.slice(1);
  assert.deepEqual(
    afterAhead.map((c) => c.white.name),
    [
      'Ahead White 1',
      'Ahead White 2',
      'OnTime White 1',
      'OnTime White 2',
      'Updated Behind',
      'Seed White 2',
      'Seed White 3',
    ],
  );
  assert.deepEqual(await drain({ since: aheadTime }, 3), afterAhead);
  assert.deepEqual(await drain({ since: afterSeed }, 3), afterAhead);
});

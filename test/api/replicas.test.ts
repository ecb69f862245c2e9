// Reads from PostgreSQL replicas (docs/architecture.md, "Reads from replicas"; docs/operations.md, "Replicas"),
// on a cluster of the test's own (test/helpers/pg-cluster.ts): a primary and a replica that replays every
// commit 2 s late. Two instances serve the same store, one reading the delayed replica, one the primary. A
// client alternating between them follows the feed while CLI writers import, update, move and delete: it
// never sees the feed go back, never misses a change, never gets a 404 for a game a page showed as present
// (it fetches each with minCursor), never an older game than the page showed; its mirror ends equal to the
// primary's /games. A token revoked on the primary is refused at once by the instance on the lagging replica.
// A replica that stops is skipped (reads go to the primary, logged and counted) and taken back once it is up.
// SQLite refuses the settings. The cluster suites skip, saying why, without PostgreSQL's server binaries.
// The two instances run in the test's process (serveInProcess), each with its own store connections (its
// replica's too); the CLI writers are child processes.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openStore, type ReplicaEvent } from '../../src/store/index.ts';
import {
  byId,
  type Change,
  essentials,
  type FeedPage,
  runWriter,
  SEED_GAMES,
  seedRun,
  writerScripts,
} from '../helpers/changes-fixtures.ts';
import { cliInProcess } from '../helpers/cli-in-process.ts';
import {
  type Answer,
  cli,
  cliJson,
  type Env,
  http,
  issueToken,
  settledLog,
  spawnCli,
  tempEnv,
} from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { PG_CLUSTER_SKIP, type PgCluster, pgCluster } from '../helpers/pg-cluster.ts';
import { waitFor } from '../helpers/production.ts';
import { queryPostgres } from '../helpers/stores.ts';

const REPLICA_DELAY_MS = 2000;

interface Detail extends Change {
  pgn: string;
}

/** A counter or gauge of /metrics, by its labels (0 when absent). */
async function metric(server: { base: string }, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('reads from a replica 2 s behind the primary', { skip: PG_CLUSTER_SKIP ?? false }, () => {
  let cluster: PgCluster;
  let env: Env;
  let onPrimary: InProcessServer;
  let onReplica: InProcessServer;
  let token: string;

  before(async () => {
    cluster = await pgCluster([{ applyDelayMs: REPLICA_DELAY_MS }]);
    const database = await cluster.createDatabase();
    const replica = cluster.replicas[0];
    assert.ok(replica);
    env = tempEnv({ DATABASE_URL: cluster.primary.url(database), RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'follower']);
    token = await issueToken(env, 'alice', 'follower', 'games.read databases.read');
    onPrimary = await serveInProcess(env);
    // The delayed replica stays within the limit: the test is about a replica that lags and is still used.
    onReplica = await serveInProcess(env, {
      DATABASE_REPLICA_URLS: replica.url(database),
      REPLICA_MAX_LAG: '1m',
    });
  });
  after(async () => {
    await onPrimary?.stop();
    await onReplica?.stop();
    env?.cleanup();
    cluster?.cleanup();
  });

  test('a client alternating between the instances never goes back, misses nothing, never gets a 404 or an older game than a page showed', async (t) => {
    const servers = [onReplica, onPrimary];
    let turn = 0;
    /** The next instance: each request goes to the other one. */
    const next = () => `${(servers[turn++ % 2] as InProcessServer).base}/api/v1`;
    const get = async <T>(path: string) => http<T>(next(), path, { token });

    const { a, b, c } = await seedRun(env, 1);
    const seeded = await http<{ data: Change[] }>(
      `${onPrimary.base}/api/v1`,
      `/databases/${a.id}/games?limit=200`,
      {
        token,
      },
    );
    const seed = seeded.json.data.map((g) => g.id);
    assert.equal(seed.length, SEED_GAMES);

    const mirror = new Map<string, Detail>();
    /** The latest updatedAt the client has seen of each game: a game never goes back to an older one. */
    const seen = new Map<string, string>();
    const gone = new Set<string>();
    let cursor: string | null = null;
    let lastTime = '';
    let pages = 0;
    let writersDone = false;

    const follow = async () => {
      for (;;) {
        const done = writersDone;
        const expand = pages % 3 === 2;
        const query = `limit=5${cursor ? `&cursor=${cursor}` : ''}${expand ? '&expand=game' : ''}`;
        const res = await get<FeedPage & { data: (Change & { game?: Detail | null })[] }>(
          `/changes?${query}`,
        );
        assert.equal(res.status, 200, res.text);
        const page = res.json;
        pages++;
        for (const change of page.data) {
          // The feed never goes back: its changes come in change order, across pages and instances.
          assert.ok(change.updatedAt >= lastTime, `feed went back: ${change.updatedAt} < ${lastTime}`);
          lastTime = change.updatedAt;
          const before = seen.get(change.id);
          assert.ok(
            before === undefined || change.updatedAt >= before,
            `${change.id} went back to an older change`,
          );
          seen.set(change.id, change.updatedAt);
          if (change.deleted) {
            mirror.delete(change.id);
            continue;
          }
          let detail: Detail | null | undefined = change.game;
          if (!expand) {
            const fetched = await get<{ data: Detail }>(
              `/games/${change.id}?minCursor=${encodeURIComponent(page.nextCursor)}`,
            );
            if (fetched.status === 404) {
              // Only a game deleted since the page may be gone; checked once the feed is drained.
              gone.add(change.id);
              mirror.delete(change.id);
              continue;
            }
            assert.equal(fetched.status, 200, fetched.text);
            detail = fetched.json.data;
          }
          assert.ok(detail, `no game for ${change.id}`);
          assert.ok(
            detail.updatedAt >= change.updatedAt,
            `GET /games/${change.id} answered an older game (${detail.updatedAt}) than the page showed (${change.updatedAt})`,
          );
          mirror.set(change.id, detail);
        }
        cursor = page.nextCursor;
        if (done && !page.hasMore) {
          // Drained on both instances in turn: the replica's instance may still be 2 s behind.
          return;
        }
      }
    };

    const following = follow();
    const tallies = await Promise.all(
      writerScripts(env.dir, 1, seed, { a: a.slug, b: b.slug, c: c.slug }).map((commands) =>
        runWriter(env, commands),
      ),
    );
    writersDone = true;
    await following;
    // A last pass on the primary's instance, after the writers: everything committed is in the mirror.
    for (;;) {
      const res: Answer<FeedPage> = await http<FeedPage>(
        `${onPrimary.base}/api/v1`,
        `/changes?limit=50&cursor=${cursor}`,
        {
          token,
        },
      );
      for (const change of res.json.data) {
        if (change.deleted) mirror.delete(change.id);
        else {
          const fetched = await http<{ data: Detail }>(`${onPrimary.base}/api/v1`, `/games/${change.id}`, {
            token,
          });
          mirror.set(change.id, fetched.json.data);
        }
        seen.set(change.id, change.updatedAt);
      }
      cursor = res.json.nextCursor;
      if (!res.json.hasMore) break;
    }

    const listed: Change[] = [];
    for (let offset = 0; ; offset += 200) {
      const res = await http<{ data: Change[] }>(
        `${onPrimary.base}/api/v1`,
        `/games?limit=200&offset=${offset}`,
        {
          token,
        },
      );
      listed.push(...res.json.data);
      if (res.json.data.length < 200) break;
    }
    assert.deepEqual(
      [...mirror.values()].map(essentials).sort(byId),
      listed.map(essentials).sort(byId),
      "the client's mirror is the primary's /games",
    );
    for (const id of gone) {
      assert.ok(
        !mirror.has(id),
        `a 404 for ${id}, which the primary still has: a page showed it, a replica lost it`,
      );
    }
    const replicaReads = await metric(onReplica, 'chessport_store_reads_total', 'target="replica"');
    const behind = await metric(onReplica, 'chessport_store_read_fallbacks_total', 'reason="behind"');
    assert.ok(replicaReads > 0, 'the replica instance read from its replica');
    const tallied = tallies.reduce((n, w) => n + w.ok, 0);
    t.diagnostic(
      `${pages} pages, ${tallied} writes, ${mirror.size} games mirrored, ${gone.size} 404s of games deleted ` +
        `meanwhile; replica instance: ${replicaReads} reads on the replica, ${behind} passed to the primary as behind`,
    );
  });

  test('a game fetched with the cursor of the page that showed it is never older, whichever instance answers', async (t) => {
    const file = join(env.dir, 'fresh.pgn');
    writeFileSync(
      file,
      '[Event "Fresh"]\n[White "Fresh White"]\n[Black "Fresh Black"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n',
    );
    // The feed's end before the import, read on the primary.
    let res = await http<FeedPage>(`${onPrimary.base}/api/v1`, '/changes?limit=200', { token });
    let cursor = res.json.nextCursor;
    while (res.json.hasMore) {
      res = await http<FeedPage>(`${onPrimary.base}/api/v1`, `/changes?limit=200&cursor=${cursor}`, {
        token,
      });
      cursor = res.json.nextCursor;
    }
    await cliJson(env, ['import', file, '--user', 'alice', '--database', 'Fresh']);
    const page = await http<FeedPage>(`${onPrimary.base}/api/v1`, `/changes?cursor=${cursor}`, { token });
    assert.equal(page.status, 200, page.text);
    const fresh = page.json.data.at(-1);
    assert.ok(fresh && !fresh.deleted);
    const pathOf = (id: string) => `/games/${id}?minCursor=${encodeURIComponent(page.json.nextCursor)}`;
    const answer = await http<{ data: Detail }>(`${onReplica.base}/api/v1`, pathOf(fresh.id), { token });
    // Without the hint the replica's instance answers what its replica has: within its delay, 404.
    const unhinted = await http(`${onReplica.base}/api/v1`, `/games/${fresh.id}`, { token });
    t.diagnostic(`without minCursor, right after the import: ${unhinted.status}`);
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.json.data.updatedAt, fresh.updatedAt);
    // The replica's own feed, read after the page's cursor, never answers with an earlier cursor's page.
    const onIt = await http<FeedPage>(`${onReplica.base}/api/v1`, `/changes?cursor=${page.json.nextCursor}`, {
      token,
    });
    assert.equal(onIt.status, 200);
    assert.deepEqual(onIt.json.data, []);
    assert.equal(onIt.json.nextCursor, page.json.nextCursor);
    // A malformed or another reader's cursor is refused.
    for (const bad of ['', 'nonsense', page.json.nextCursor.slice(0, -2)]) {
      const refused: Answer = await http(`${onReplica.base}/api/v1`, `/games/${fresh.id}?minCursor=${bad}`, {
        token,
      });
      assert.equal(refused.status, 400, `minCursor=${bad}: ${refused.text}`);
    }
    await cliJson(env, ['apps', 'add', 'other']);
    const other = await issueToken(env, 'alice', 'other', 'games.read');
    const foreign = await http(`${onReplica.base}/api/v1`, pathOf(fresh.id), { token: other });
    assert.equal(foreign.status, 400);
  });

  test('a token revoked on the primary is refused at once by the instance reading the lagging replica', async () => {
    const revoked = await issueToken(env, 'alice', 'follower', 'games.read');
    assert.equal((await http(`${onReplica.base}/api/v1`, '/games', { token: revoked })).status, 200);
    const result = await cli(env, ['tokens', 'revoke', revoked]);
    assert.equal(result.code, 0, result.stderr);
    // No wait: token look-ups run on the primary.
    const refused = await http(`${onReplica.base}/api/v1`, '/games', { token: revoked });
    assert.equal(refused.status, 401, refused.text);
  });

  test('an export read on the lagging replica names its cursor; the feed after it, on the primary, gives what it lacks', async () => {
    const file = join(env.dir, 'late.pgn');
    writeFileSync(
      file,
      '[Event "Late"]\n[White "Late White"]\n[Black "Late Black"]\n[Result "0-1"]\n\n1. d4 d5 0-1\n',
    );
    await cliJson(env, ['import', file, '--user', 'alice', '--database', 'Late']);
    const before = await metric(onReplica, 'chessport_store_reads_total', 'target="replica"');
    // Right after the import: the replica, 2 s behind, may not hold the new game yet; its cursor says so.
    const exported = await fetch(`${onReplica.base}/api/v1/games?format=ndjson`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(exported.status, 200);
    const cursor = exported.headers.get('x-changes-cursor');
    assert.ok(cursor);
    const ids = new Set(
      (await exported.text())
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { id: string }).id),
    );
    assert.ok((await metric(onReplica, 'chessport_store_reads_total', 'target="replica"')) > before);
    let next = cursor;
    for (;;) {
      const page = await http<FeedPage>(`${onPrimary.base}/api/v1`, `/changes?limit=500&cursor=${next}`, {
        token,
      });
      assert.equal(page.status, 200, page.text);
      for (const change of page.json.data) {
        if (change.deleted) ids.delete(change.id);
        else ids.add(change.id);
      }
      next = page.json.nextCursor;
      if (!page.json.hasMore) break;
    }
    const all = new Set<string>();
    let offset = 0;
    for (;;) {
      const list = await http<{ data: { id: string }[] }>(
        `${onPrimary.base}/api/v1`,
        `/games?limit=200&offset=${offset}`,
        {
          token,
        },
      );
      for (const game of list.json.data) all.add(game.id);
      if (list.json.data.length < 200) break;
      offset += 200;
    }
    assert.deepEqual([...ids].sort(), [...all].sort());
  });

  test('a replica lagging past REPLICA_MAX_LAG is skipped while it lags, and taken back once it catches up', async () => {
    const replica = cluster.replicas[0];
    assert.ok(replica);
    const primaryUrl = env.env.DATABASE_URL as string;
    const store = await openStore(primaryUrl, { migrate: false, poolMax: 2 });
    const events: ReplicaEvent[] = [];
    try {
      await store.useReplicas({
        urls: [replica.url(new URL(primaryUrl).pathname.slice(1))],
        maxLagMs: 500,
        answerTimeoutMs: 30_000,
        poolMax: 2,
        onEvent: (event) => events.push(event),
      });
      await queryPostgres(primaryUrl, 'create table if not exists lag_probe (n integer)');
      // Commits every 100 ms: the replica replays each 2 s late, past the 0.5 s limit.
      await waitFor('the lagging replica skipped', async () => {
        await queryPostgres(primaryUrl, 'insert into lag_probe values (1)');
        await new Promise((resolve) => setTimeout(resolve, 100));
        return events.some((event) => event.kind === 'skipped' && /over the limit/.test(event.reason));
      });
      assert.equal(store.reads.states()[0]?.healthy, false);
      const fallbacks = store.reads.counts.fallbacks.unavailable;
      await store.games.total('nobody');
      assert.equal(store.reads.counts.fallbacks.unavailable, fallbacks + 1, 'read on the primary');
      // Writes stop: it replays the last within its delay and is taken back.
      await waitFor('the replica taken back', () => store.reads.states()[0]?.healthy === true);
      assert.equal(events.at(-1)?.kind, 'recovered');
    } finally {
      await store.close();
    }
  });

  test('a replica that stops is skipped, reads go to the primary, and it is taken back once it is up', async () => {
    const replica = cluster.replicas[0];
    assert.ok(replica);
    const api = `${onReplica.base}/api/v1`;
    const primaryBefore = await metric(onReplica, 'chessport_store_reads_total', 'target="primary"');
    replica.stop('fast');
    // Every answer is whole meanwhile: the reads that meet the stopped replica run again on the primary.
    await waitFor('the replica skipped', async () => {
      const res = await http<{ data: unknown[] }>(api, '/games?limit=5', { token });
      assert.equal(res.status, 200, res.text);
      return (await settledLog(onReplica)).includes('replica skipped');
    });
    assert.match(await settledLog(onReplica), /replica skipped/);
    for (let i = 0; i < 5; i++) assert.equal((await http(api, '/games?limit=5', { token })).status, 200);
    const primaryAfter = await metric(onReplica, 'chessport_store_reads_total', 'target="primary"');
    assert.ok(primaryAfter > primaryBefore, 'the reads went to the primary');
    const servingBefore = (await settledLog(onReplica)).split('replica serving reads').length;
    replica.start();
    const replicaBefore = await metric(onReplica, 'chessport_store_reads_total', 'target="replica"');
    await waitFor('the replica taken back', async () => {
      assert.equal((await http(api, '/games?limit=5', { token })).status, 200);
      return (await metric(onReplica, 'chessport_store_reads_total', 'target="replica"')) > replicaBefore;
    });
    assert.ok((await settledLog(onReplica)).split('replica serving reads').length > servingBefore, 'logged');
  });
});

test('a SQLite store refuses DATABASE_REPLICA_URLS and REPLICA_MAX_LAG, saying why', async () => {
  for (const extra of [
    { DATABASE_REPLICA_URLS: 'postgres://postgres@127.0.0.1:5432/replica' },
    { REPLICA_MAX_LAG: '10s' },
  ]) {
    const env = tempEnv(extra);
    try {
      env.env.DATABASE_URL = join(env.dir, 'store.sqlite');
      // A child process: serve gets past its settings (its stop signals are the process's, the store opens)
      // before the store refuses them.
      const { exited } = spawnCli(env, ['serve', '--port', '0']);
      const exit = await exited;
      assert.notEqual(exit.code, 0);
      assert.match(exit.stderr, /read replicas .* are for a PostgreSQL store/);
    } finally {
      env.cleanup();
    }
  }
});

test('DATABASE_REPLICA_URLS must be postgres:// URLs, and is not echoed', async () => {
  const env = tempEnv({ DATABASE_REPLICA_URLS: 'postgres://u:secret@h/db,mysql://u:secret2@h/db' });
  try {
    // Refused with the settings, before the store opens: in this process.
    const exit = await cliInProcess(env, ['serve', '--port', '0']);
    assert.notEqual(exit.code, 0);
    assert.match(exit.stderr, /invalid DATABASE_REPLICA_URLS: entry 2 is not a postgres:\/\/ URL/);
    assert.doesNotMatch(exit.stderr, /secret/);
  } finally {
    env.cleanup();
  }
});

// The failover drill (issue 34): two instances serving through a TCP forwarder to the primary of a PostgreSQL
// cluster of the drill's own (test/helpers/pg-cluster.ts), a `chessport sync --watch` following the feed, a
// webhook receiver, a CLI import running and a load of API reads on both instances. The primary is stopped,
// the replica promoted, and the forwarder moved to it, as a managed database's DNS name would move. Then the
// same for Redis killed and started again under the load.
// It checks, and exits 1 where one fails: no 200 that is short or wrong (every one a whole JSON page), every
// 503 with Retry-After, the instances answering 200 again on their own; the import run again adds exactly
// the games that the interrupted one had not stored; the sync's mirror equals the new primary's data; a
// webhook delivery covers the last change (at least once). It prints the figures: seconds of 503, requests
// answered, games and deliveries lost.
// Usage: node bench/failover.ts [--games N] [--only postgres|redis]   (default 4000 games in the import)
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Sqlite from 'better-sqlite3';
import {
  cliJson,
  type Env,
  importPgn,
  issueToken,
  type Server,
  spawnCli,
  startServer,
  tempEnv,
} from '../test/helpers/harness.ts';
import { PG_CLUSTER_SKIP, type PgCluster, pgCluster } from '../test/helpers/pg-cluster.ts';
import { writeGames } from '../test/helpers/production.ts';
import { hasRedisServer, type OwnRedis, ownRedis } from '../test/helpers/redis-server.ts';
import { queryPostgres } from '../test/helpers/stores.ts';
import { type TcpProxy, tcpProxy } from '../test/helpers/tcp-proxy.ts';
import { type Receiver, startReceiver, subscribe } from '../test/helpers/webhook-receiver.ts';

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const GAMES = arg('--games', 4000);
const SCOPES = 'user.read,games.read,databases.read';
const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const started = Date.now();
/** A line of progress, with the seconds since the start. */
function step(what: string): void {
  console.log(`     [${((Date.now() - started) / 1000).toFixed(1)} s] ${what}`);
}

const failures: string[] = [];
function check(ok: boolean, what: string): void {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

/** What the load saw: answers by status, and the faults that must not happen. */
class Load {
  readonly byStatus = new Map<string, number>();
  /** Per instance, the times (ms) of its 503 answers. */
  readonly unavailableAt: number[][];
  wrong200 = 0;
  no503RetryAfter = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(servers: Server[], token: string) {
    this.unavailableAt = servers.map(() => []);
    const paths = ['/games?limit=50', '/changes?limit=50', '/databases', '/me'];
    const worker = async (w: number) => {
      for (let i = w; this.running; i++) {
        const s = i % servers.length;
        await this.request(s, `${servers[s]?.base}/api/v1${paths[i % paths.length]}`, token);
      }
    };
    this.done = Promise.all([0, 1, 2, 3].map(worker)).then(() => undefined);
  }

  private async request(instance: number, url: string, token: string): Promise<void> {
    let key: string;
    try {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      key = String(res.status);
      if (res.status === 200) {
        const json = JSON.parse(text) as { data?: unknown };
        if (json.data === undefined || json.data === null) this.wrong200++;
      } else if (res.status === 503) {
        this.unavailableAt[instance]?.push(Date.now());
        if (!res.headers.get('retry-after')) this.no503RetryAfter++;
      }
    } catch (error) {
      // A 200 whose body does not parse is short; a refused or cut connection is counted by its cause.
      key = error instanceof SyntaxError ? 'short 200' : `error: ${(error as Error).cause ?? error}`;
      if (error instanceof SyntaxError) this.wrong200++;
      await sleep(50);
    }
    this.byStatus.set(key, (this.byStatus.get(key) ?? 0) + 1);
    if (key !== '200') await sleep(20);
  }

  total(): number {
    return [...this.byStatus.values()].reduce((a, b) => a + b, 0);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** Seconds from each instance's first 503 to its last. */
  unavailableSeconds(): string[] {
    return this.unavailableAt.map((times) =>
      times.length === 0 ? '0' : ((Math.max(...times) - Math.min(...times)) / 1000).toFixed(1),
    );
  }
}

/** Resolves once every instance answers /games with 200; the ms that took. */
async function recovered(servers: Server[], token: string, since: number): Promise<number> {
  for (const server of servers) {
    for (;;) {
      const res = await fetch(`${server.base}/api/v1/games?limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      }).catch(() => null);
      await res?.text();
      if (res?.status === 200) break;
      if (Date.now() - since > 120_000) throw new Error(`${server.base} did not recover in 120 s`);
      await sleep(100);
    }
  }
  return Date.now() - since;
}

/** pg_ctl of the cluster's binaries, as the postgres user where this runs as root, without blocking. */
async function pgCtl(args: string[]): Promise<void> {
  const { stdout } = await run('pg_config', ['--bindir']);
  const binary = join(stdout.trim(), 'pg_ctl');
  const [file, prefix] =
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', binary]] : [binary, []];
  await run(file, [...prefix, ...args], { cwd: tmpdir() });
}

/** "id database updatedAt" of every live game of the store at `url`. */
async function primaryGameKeys(url: string): Promise<Set<string>> {
  const rows = await queryPostgres<{ id: string; database_id: string; updated_at: number }>(
    url,
    'select id, database_id, updated_at::bigint as updated_at from games where deleted = 0',
  );
  return new Set(rows.map((r) => `${r.id} ${r.database_id} ${new Date(Number(r.updated_at)).toISOString()}`));
}

/** The same of a sync's mirror (its SQLite file, read as its owner would). */
function mirrorGameKeys(out: string): Set<string> {
  const db = new Sqlite(join(out, 'mirror.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('select id, database_id, updated_at from games').all() as {
      id: string;
      database_id: string;
      updated_at: string;
    }[];
    return new Set(rows.map((r) => `${r.id} ${r.database_id} ${r.updated_at}`));
  } finally {
    db.close();
  }
}

async function gameCount(url: string): Promise<number> {
  const [row] = await queryPostgres<{ n: number }>(
    url,
    'select count(*)::int as n from games where deleted = 0',
  );
  return row?.n ?? 0;
}

/** A `chessport sync --watch` kept running: started again whenever it exits, until stopped. */
class Follower {
  restarts = 0;
  private child: ChildProcess | undefined;
  private stopping = false;
  readonly out: string;
  private readonly env: Env;
  private readonly args: string[];

  constructor(env: Env, base: string, token: string) {
    this.env = env;
    this.out = mkdtempSync(join(tmpdir(), 'chessport-failover-mirror-'));
    this.args = ['sync', '--base-url', base, '--token', token, '--out', this.out, '--watch'];
    this.start();
  }

  private start(): void {
    const spawned = spawnCli(this.env, this.args);
    this.child = spawned.child;
    void spawned.exited.then((exit) => {
      if (this.stopping) return;
      this.restarts++;
      console.log(
        `     the sync exited (${exit.code}): ${exit.stderr.trim().split('\n').at(-1)}; started again`,
      );
      setTimeout(() => this.start(), 1000);
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

async function postgresDrill(): Promise<void> {
  console.log('\n--- PostgreSQL: the primary stopped, the replica promoted, the forwarder moved');
  let cluster: PgCluster | undefined;
  let proxy: TcpProxy | undefined;
  let env: Env | undefined;
  const servers: Server[] = [];
  let receiver: Receiver | undefined;
  let follower: Follower | undefined;
  try {
    cluster = await pgCluster([{}]);
    const primary = cluster.primary;
    const replica = cluster.replicas[0];
    if (!replica) throw new Error('no replica');
    const database = await cluster.createDatabase();
    proxy = await tcpProxy('127.0.0.1', primary.port);
    const url = `postgres://postgres@127.0.0.1:${proxy.port}/${database}`;
    // A query unanswered for 10 s drops its connection (a primary gone without a word is found in time).
    env = tempEnv({
      DATABASE_URL: url,
      WEBHOOK_ALLOW_PRIVATE: '1',
      PG_ANSWER_TIMEOUT: '10s',
      RATE_LIMIT_MAX: '100000000',
    });
    const theEnv = env;
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    receiver = await startReceiver();
    await subscribe(env, 'mirror', receiver);
    const token = await issueToken(env, 'alice', 'mirror', SCOPES);
    await importPgn(env, writeGames(env.dir, 'seed.pgn', 200, 'Seed'), 'alice', 'Main');
    for (let i = 0; i < 2; i++) servers.push(await startServer(env));
    follower = new Follower(env, servers[0]?.base as string, token);
    const load = new Load(servers, token);

    const file = writeGames(env.dir, 'big.pgn', GAMES, 'Big');
    const importing = spawnCli(env, ['import', file, '--user', 'alice', '--database', 'Main', '--json']);
    const direct = primary.url(database);
    while ((await gameCount(direct)) < 200 + Math.min(300, GAMES / 10)) {
      if (importing.child.exitCode !== null) break;
      await sleep(100);
    }
    const beforeStop = await gameCount(direct);
    step(`${beforeStop - 200} games of the import stored: stopping the primary`);
    const stoppedAt = Date.now();
    await pgCtl(['-D', primary.dataDir, '-m', 'fast', '-w', '-t', '120', 'stop']);
    // No primary answers for a while: the instances must say 503, the import fails.
    await sleep(3000);
    await pgCtl(['-D', replica.dataDir, '-w', '-t', '120', 'promote']);
    proxy.retarget('127.0.0.1', replica.port);
    step('the replica promoted, the forwarder moved to it');
    const movedAt = Date.now();
    const firstImport = await importing.exited;
    step(`the first import ended (exit ${firstImport.code})`);
    const recoveryMs = await recovered(servers, token, movedAt);
    step('both instances answer 200 again');
    const newPrimary = replica.url(database);
    const storedByFirst = (await gameCount(newPrimary)) - 200;
    const rerun = await cliJson<{ files: { imported: number; duplicates: number }[] }>(theEnv, [
      'import',
      file,
      '--user',
      'alice',
      '--database',
      'Main',
    ]);
    const added = rerun.files[0]?.imported ?? Number.NaN;
    const finalCount = await gameCount(newPrimary);
    step(`the import run again added ${added}`);
    await sleep(2000);
    await load.stop();

    // The sync: its mirror holds the new primary's live games, each in its latest version (its database and
    // change time); the sync suites check a mirror's content against the API field by field.
    const [primaryGames, databasesOnPrimary] = await Promise.all([
      primaryGameKeys(newPrimary),
      queryPostgres<{ n: number }>(
        newPrimary,
        'select count(*)::int as n from databases where deleted_at is null',
      ),
    ]);
    step(`the new primary holds ${primaryGames.size} games in ${databasesOnPrimary[0]?.n} database(s)`);
    const mirrorUntil = Date.now() + 120_000;
    let mirrorEqual = false;
    while (Date.now() < mirrorUntil && !mirrorEqual) {
      const mirror = mirrorGameKeys(follower.out);
      mirrorEqual = mirror.size === primaryGames.size && [...mirror].every((key) => primaryGames.has(key));
      if (!mirrorEqual) await sleep(500);
    }
    step(`the mirror ${mirrorEqual ? 'equals' : 'does not equal'} the new primary's data`);
    await follower.stop();

    // The webhooks: a delivery covers alice's last change on the new primary.
    const [last] = await queryPostgres<{ at: number }>(
      newPrimary,
      'select max(updated_at)::bigint as at from games',
    );
    const lastAt = new Date(Number(last?.at)).toISOString();
    const covered = await receiver
      .waitFor((received) => received.some((r) => r.status < 300 && r.event.timestamp >= lastAt), 120_000)
      .then(
        () => true,
        () => false,
      );

    console.log(
      `     import of ${GAMES} games: first run exit ${firstImport.code} with ${storedByFirst} stored ` +
        `(${beforeStop - 200} when the primary stopped); the run again added ${added}; ${finalCount - 200} in all`,
    );
    console.log(
      `     requests answered: ${load.total()} (${[...load.byStatus].map(([k, v]) => `${k}: ${v}`).join(', ')})`,
    );
    console.log(
      `     seconds of 503 per instance: ${load.unavailableSeconds().join(', ')}; primary stopped to forwarder moved: ` +
        `${((movedAt - stoppedAt) / 1000).toFixed(1)} s; both instances answering 200 again ${(recoveryMs / 1000).toFixed(1)} s after the move`,
    );
    console.log(
      `     the sync: started again ${follower.restarts} times; webhook deliveries: ${receiver.delivered().length}`,
    );
    check(load.wrong200 === 0, `no short or wrong 200 (${load.wrong200})`);
    check(load.no503RetryAfter === 0, `every 503 has Retry-After (${load.no503RetryAfter} without)`);
    check(
      [...load.byStatus.keys()].every((k) => k === '200' || k === '503'),
      'every answer is 200 or 503 (no 500, no cut connection)',
    );
    check(
      added === GAMES - storedByFirst,
      `the import run again added exactly the missing ${GAMES - storedByFirst}`,
    );
    check(finalCount - 200 === GAMES, `games lost: ${GAMES - (finalCount - 200)}`);
    check(mirrorEqual, "the sync's mirror equals the new primary's data");
    check(covered, 'deliveries lost: a delivery covers the last change');
  } finally {
    await follower?.stop();
    if (follower) rmSync(follower.out, { recursive: true, force: true });
    await Promise.all(servers.map((server) => server.stop()));
    await receiver?.close();
    await proxy?.close();
    env?.cleanup();
    cluster?.cleanup();
  }
}

async function redisDrill(): Promise<void> {
  console.log('\n--- Redis killed and started again under load');
  let redis: OwnRedis | undefined;
  let env: Env | undefined;
  const servers: Server[] = [];
  try {
    redis = await ownRedis();
    env = tempEnv({ REDIS_URL: redis.url, RATE_LIMIT_MAX: '100000000' });
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['apps', 'add', 'reader']);
    const token = await issueToken(env, 'alice', 'reader', SCOPES);
    await importPgn(env, writeGames(env.dir, 'seed.pgn', 200, 'Seed'), 'alice', 'Main');
    // One after the other: one that fails to start leaves the other in `servers`, stopped below.
    for (let i = 0; i < 2; i++) servers.push(await startServer(env));
    const load = new Load(servers, token);
    await sleep(3000);
    await redis.kill();
    const killedAt = Date.now();
    await sleep(3000);
    await redis.start();
    const backAt = Date.now();
    await sleep(5000);
    await load.stop();
    const logged = servers.map((server) => /redis/i.test(server.log()));
    console.log(
      `     requests answered: ${load.total()} (${[...load.byStatus].map(([k, v]) => `${k}: ${v}`).join(', ')})`,
    );
    console.log(
      `     Redis down ${((backAt - killedAt) / 1000).toFixed(1)} s; seconds of 503 per instance: ${load.unavailableSeconds().join(', ')}; ` +
        `instances that logged it: ${logged.filter(Boolean).length}`,
    );
    check(load.wrong200 === 0, `no short or wrong 200 (${load.wrong200})`);
    check(
      [...load.byStatus.keys()].every((k) => k === '200'),
      'every request answered 200 while Redis was away (local limits meanwhile)',
    );
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
    env?.cleanup();
    await redis?.kill();
  }
}

const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
if (only !== 'redis') {
  if (PG_CLUSTER_SKIP) console.log(`skipped the PostgreSQL drill: ${PG_CLUSTER_SKIP}`);
  else await postgresDrill();
}
if (only !== 'postgres') {
  if (!hasRedisServer) console.log('skipped the Redis drill: redis-server is not installed');
  else await redisDrill();
}
if (failures.length > 0) {
  console.log(`\n${failures.length} check(s) failed`);
  process.exit(1);
}

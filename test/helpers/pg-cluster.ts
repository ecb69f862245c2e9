// A PostgreSQL cluster of the test's own: a primary and streaming replicas in a temporary folder on spare
// ports, for the suites of replica reads, pooling and failover. The shared server (TEST_POSTGRES_URL) serves
// other suites and is never stopped. Debian's server binaries live in `pg_config --bindir`, not on PATH;
// PostgreSQL refuses to run as root, so as root every command runs as the `postgres` user (runuser), and the
// folder is that user's. A replica may lag on purpose (recovery_min_apply_delay: it receives the WAL at once
// and replays each commit that long after the primary made it). Suites skip, saying why, with PG_CLUSTER_SKIP.
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.ts';
import { queryPostgres } from './stores.ts';

const BINDIR = pgBindir();
const RUN_AS = runAs();

/** Why the suites that need a cluster of their own skip, or null where they can run. */
export const PG_CLUSTER_SKIP: string | null =
  BINDIR === null
    ? 'the PostgreSQL server binaries are missing (`pg_config --bindir` names no folder with initdb, pg_ctl and pg_basebackup)'
    : RUN_AS === null
      ? 'PostgreSQL refuses to run as root, and there is no `postgres` user or `runuser` to run it as'
      : null;

export interface PgNode {
  /** `primary`, `replica1`, `replica2`, ... (a promoted replica keeps its name). */
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  /** The URL of `database` on this node (default: `postgres`). */
  url(database?: string): string;
  /** Whether it is running (as this helper last left it). */
  readonly running: boolean;
  /** Starts it again, once it accepts connections. */
  start(): void;
  /** Stops it: `fast` ends sessions and shuts down cleanly; `immediate` is a crash (recovery on start). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** A replica's pg_last_wal_replay_lsn(), or the primary's pg_current_wal_insert_lsn(), as text. */
  lsn(): Promise<string>;
}

export interface PgCluster {
  readonly dir: string;
  readonly primary: PgNode;
  readonly replicas: readonly PgNode[];
  /**
   * A fresh database, made on the primary; returns its name once every running replica has replayed it
   * (a delayed replica takes its delay). `url(name)` on any node reaches it.
   */
  createDatabase(): Promise<string>;
  /** Resolves once `replica` has replayed everything the primary had written when this was called. */
  caughtUp(replica: PgNode, ms?: number): Promise<void>;
  /** Promotes a replica (`pg_ctl promote`), once it accepts writes; the old primary should be stopped first. */
  promote(replica: PgNode): Promise<void>;
  /** Stops every node (immediate) and removes the folder. Safe to call twice. */
  cleanup(): void;
}

export interface ReplicaOptions {
  /** recovery_min_apply_delay in ms: how far behind the primary this replica replays commits. */
  applyDelayMs?: number;
}

/** A primary and one replica per entry of `replicas`, all started and streaming. */
export async function pgCluster(replicas: ReplicaOptions[] = [{}]): Promise<PgCluster> {
  if (BINDIR === null || RUN_AS === null) throw new Error(`no PostgreSQL cluster: ${PG_CLUSTER_SKIP}`);
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pg-'));
  if (RUN_AS.uid !== undefined) chownSync(dir, RUN_AS.uid, RUN_AS.gid ?? RUN_AS.uid);
  const nodes: Node[] = [];
  const stopAll = () => {
    for (const node of nodes) if (node.running) node.stop('immediate');
  };
  // A test that dies before its cleanup leaves no postmaster behind.
  process.once('exit', stopAll);
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    stopAll();
    process.removeListener('exit', stopAll);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const primary = new Node('primary', dir, await freePort());
    nodes.push(primary);
    pg('initdb', [
      '-D',
      primary.dataDir,
      '-U',
      'postgres',
      '--auth=trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    primary.configure([
      'wal_level = replica',
      'max_wal_senders = 10',
      'wal_keep_size = 256MB',
      'max_connections = 200',
    ]);
    primary.start();
    for (const [i, options] of replicas.entries()) {
      const replica = new Node(`replica${i + 1}`, dir, await freePort());
      nodes.push(replica);
      pg('pg_basebackup', [
        ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
        ...['-D', replica.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'],
      ]);
      replica.configure([
        `recovery_min_apply_delay = '${options.applyDelayMs ?? 0}ms'`,
        // Queries on the replica hold back the primary's vacuum rather than being cancelled by its replay.
        'hot_standby_feedback = on',
      ]);
      replica.start();
    }
    const cluster: PgCluster = {
      dir,
      primary,
      replicas: nodes.slice(1),
      async createDatabase() {
        const name = `chessport_c_${Math.random().toString(16).slice(2, 14)}`;
        await queryPostgres(primary.url(), `create database ${name}`);
        for (const replica of cluster.replicas) if (replica.running) await cluster.caughtUp(replica);
        return name;
      },
      async caughtUp(replica, ms = 60_000) {
        const writer = nodes.find((node) => node.running && node !== replica && !node.inRecovery());
        if (!writer) throw new Error('no running primary to catch up with');
        const target = await writer.lsn();
        const until = Date.now() + ms;
        while (Date.now() < until) {
          const [row] = await queryPostgres<{ done: boolean }>(
            replica.url(),
            'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done',
            [target],
          );
          if (row?.done) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`${replica.name} did not replay up to ${target} in ${ms} ms`);
      },
      async promote(replica) {
        pg('pg_ctl', ['-D', replica.dataDir, '-w', '-t', '120', 'promote']);
        (replica as Node).promoted = true;
        const until = Date.now() + 60_000;
        while (Date.now() < until) {
          const [row] = await queryPostgres<{ recovery: boolean }>(
            replica.url(),
            'select pg_is_in_recovery() as recovery',
          );
          if (row && !row.recovery) return;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        throw new Error(`${replica.name} was not promoted`);
      },
      cleanup,
    };
    return cluster;
  } catch (error) {
    cleanup();
    throw error;
  }
}

class Node implements PgNode {
  running = false;
  promoted = false;
  readonly name: string;
  readonly port: number;
  readonly dataDir: string;
  private readonly dir: string;
  constructor(name: string, dir: string, port: number) {
    this.name = name;
    this.dir = dir;
    this.port = port;
    this.dataDir = join(dir, name);
  }

  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Whether it replays a primary's WAL (a replica not promoted). */
  inRecovery(): boolean {
    return this.name !== 'primary' && !this.promoted;
  }

  configure(lines: string[]): void {
    const common = [
      `port = ${this.port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${this.dir}'`,
      // A test cluster: speed over durability.
      'fsync = off',
      'full_page_writes = off',
      'synchronous_commit = off',
      'shared_buffers = 32MB',
    ];
    const file = join(this.dataDir, 'postgresql.conf');
    const text = `\n# chessport test cluster\n${[...common, ...lines].join('\n')}\n`;
    if (RUN_AS?.uid === undefined) appendFileSync(file, text);
    else asPostgres('sh', ['-c', `cat >> '${file}'`], text);
  }

  start(): void {
    const log = join(this.dir, `${this.name}.log`);
    pg('pg_ctl', ['-D', this.dataDir, '-l', log, '-w', '-t', '120', 'start']);
    this.running = true;
  }

  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    if (!this.running) return;
    pg('pg_ctl', ['-D', this.dataDir, '-m', mode, '-w', '-t', '120', 'stop'], {
      allowFailure: mode === 'immediate',
    });
    this.running = false;
  }

  async lsn(): Promise<string> {
    const query = this.inRecovery()
      ? 'select pg_last_wal_replay_lsn()::text as lsn'
      : // Every record inserted, also those not yet written: with synchronous_commit off a commit returns
        // before its record is written, and pg_current_wal_lsn() (the write position) may stop short of it.
        'select pg_current_wal_insert_lsn()::text as lsn';
    const [row] = await queryPostgres<{ lsn: string }>(this.url(), query);
    if (!row) throw new Error(`${this.name} has no WAL position`);
    return row.lsn;
  }
}

function pg(binary: string, args: string[], options: { allowFailure?: boolean } = {}): void {
  if (BINDIR === null) throw new Error(PG_CLUSTER_SKIP ?? 'no PostgreSQL binaries');
  const result = asPostgres(join(BINDIR, binary), args);
  if (result.status !== 0 && !options.allowFailure) {
    throw new Error(
      `${binary} ${args.join(' ')} failed (${result.status}): ${result.stderr}${result.stdout}`,
    );
  }
}

function asPostgres(command: string, args: string[], input?: string): SpawnSyncReturns<string> {
  const [file, prefix] =
    RUN_AS?.uid === undefined ? [command, []] : ['runuser', ['-u', 'postgres', '--', command]];
  return spawnSync(file, [...prefix, ...args], { encoding: 'utf8', input, cwd: tmpdir() });
}

function pgBindir(): string | null {
  const result = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (result.status !== 0) return null;
  const dir = result.stdout.trim();
  return ['initdb', 'pg_ctl', 'pg_basebackup'].every((binary) => existsSync(join(dir, binary))) ? dir : null;
}

/** Whom the server runs as: this process's user, or as root the `postgres` user (uid/gid set). */
function runAs(): { uid?: number; gid?: number } | null {
  if (process.getuid?.() !== 0) return {};
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  const runuser = spawnSync('runuser', ['--help'], { stdio: 'ignore' });
  if (uid.status !== 0 || gid.status !== 0 || runuser.error) return null;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

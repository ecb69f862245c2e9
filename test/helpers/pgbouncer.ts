// A PgBouncer of the test's own (Debian's `pgbouncer`), in transaction pooling mode on a spare port, in front
// of a PostgreSQL server: each database of the server is reachable through it under the same name. Its
// configuration, log and pid file are in a temp folder, removed by stop(). PgBouncer refuses to run as
// root: as root it runs as the `postgres` user.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from './production.ts';
import { freePort } from './redis-server.ts';

function findPgBouncer(): string | null {
  if (spawnSync('pgbouncer', ['--version'], { stdio: 'ignore' }).status === 0) return 'pgbouncer';
  return existsSync('/usr/sbin/pgbouncer') ? '/usr/sbin/pgbouncer' : null;
}

export const PGBOUNCER = findPgBouncer();
export const PGBOUNCER_SKIP =
  'pgbouncer is not installed (Debian: apt-get install pgbouncer): the runs through it skip';

export interface PgBouncer {
  port: number;
  pid: number;
  dir: string;
  /** `url` (a database of the server behind it) as reached through the pooler. */
  pooled(url: string): string;
  /** What it logged so far. */
  log(): string;
  /** Stops it (SIGTERM: it closes every connection at once) and removes its folder. */
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** Server connections per database and user (default_pool_size): fewer than the clients' pools. */
  poolSize?: number;
}

/** Starts a PgBouncer in transaction mode in front of the server of `target` (a postgres:// URL). */
export async function startPgBouncer(target: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  if (!PGBOUNCER) throw new Error(PGBOUNCER_SKIP);
  const server = new URL(target);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'chessport-pgbouncer-'));
  const pidFile = join(dir, 'pgbouncer.pid');
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${options.poolSize ?? 4}`,
      `logfile = ${logFile}`,
      `pidfile = ${pidFile}`,
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, -1);
    for (const file of ['users.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, -1);
  }
  const command = asRoot ? ['runuser', '-u', 'postgres', '--', PGBOUNCER] : [PGBOUNCER];
  const started = spawnSync(command[0] as string, [...command.slice(1), '-d', join(dir, 'pgbouncer.ini')], {
    encoding: 'utf8',
  });
  if (started.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`pgbouncer did not start: ${started.stderr}`);
  }
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  await waitFor('pgbouncer to listen', () => accepts(port), 30_000).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; its log:\n${log()}`);
  });
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  return {
    port,
    pid,
    dir,
    pooled(url) {
      const pooled = new URL(url);
      pooled.host = `127.0.0.1:${port}`;
      return pooled.toString();
    },
    log,
    async stop() {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await waitFor('pgbouncer to exit', () => !running(pid), 30_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Whether the process runs: a zombie (exited, not reaped by a container's init) does not. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

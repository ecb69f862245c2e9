// A redis-server of the test's own, on a spare port, for the suites in which Redis must hang, die or come
// back empty: the shared Redis (TEST_REDIS_URL) serves other suites and is never stopped or flushed.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { waitFor } from './production.ts';

export const hasRedisServer = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface OwnRedis {
  port: number;
  url: string;
  /** Starts it (again, empty: nothing is saved) on the same port, once it answers. */
  start(): Promise<void>;
  /** Kills it (SIGKILL: nothing is saved); resolves once it has exited. */
  kill(): Promise<void>;
  /** Stops (SIGSTOP) or resumes (SIGCONT) it: a Redis that hangs with its connections open. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
  /** The keys under `pattern`. */
  keys(pattern: string): Promise<string[]>;
}

/** A redis-server on a spare port, started. */
export async function ownRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const own: OwnRedis = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 50 });
      probe.on('error', () => {}); // refused until redis-server listens
      await waitFor('redis-server', async () => (await probe.ping().catch(() => '')) === 'PONG');
      probe.disconnect();
    },
    async kill() {
      const running = child;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    signal(signal) {
      child?.kill(signal);
    },
    async keys(pattern) {
      const client = new Redis(port, '127.0.0.1');
      try {
        return await client.keys(pattern);
      } finally {
        client.disconnect();
      }
    },
  };
  await own.start();
  return own;
}

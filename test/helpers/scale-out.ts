// Helpers of the scale-out suite: a store that is PostgreSQL in either pass of `npm test`, the reason the suite
// skips, and a client that sends request i to instance i % n, as a round-robin load balancer would.
import { type Env, http, tempEnv } from './harness.ts';
import { createTestDatabaseSync, dropTestDatabaseLater, STORE_DIALECT, TEST_POSTGRES_URL } from './stores.ts';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || null;

/**
 * Why the suite cannot run here, or false. It needs both servers. Inside `npm test` it runs once, in the
 * PostgreSQL pass (scripts/run-tests.ts), not again in the SQLite pass beside it; run on its own
 * (`node --test test/api/scale-out.test.ts`) it runs whenever both URLs are set.
 */
export function scaleOutSkip(): string | false {
  const missing = [!TEST_POSTGRES_URL && 'TEST_POSTGRES_URL', !TEST_REDIS_URL && 'TEST_REDIS_URL'].filter(
    Boolean,
  );
  if (missing.length)
    return `${missing.join(' and ')} not set: two instances need one PostgreSQL and one Redis`;
  if (process.env.npm_lifecycle_event === 'test' && STORE_DIALECT !== 'postgres')
    return 'PostgreSQL-only: runs in the PostgreSQL pass of npm test';
  return false;
}

/**
 * tempEnv() on a fresh, empty PostgreSQL database (no migration applied: the instances that start on it at once
 * apply them), whatever dialect this pass of the tests uses.
 */
export function postgresEnv(extra: NodeJS.ProcessEnv = {}): Env {
  if (STORE_DIALECT === 'postgres') return tempEnv(extra, { emptyDatabase: true });
  const databaseUrl = createTestDatabaseSync();
  const env = tempEnv({ ...extra, DATABASE_URL: databaseUrl });
  return {
    ...env,
    databaseUrl,
    dialect: 'postgres',
    cleanup: () => {
      env.cleanup();
      dropTestDatabaseLater(databaseUrl);
    },
  };
}

/** An instance a client reaches: a child process of `chessport serve` or a server in the test's process. */
interface Instance {
  base: string;
}

/** A client of several instances: request i goes to instance i % n; it counts what each one answered. */
export class RoundRobin {
  private readonly servers: Instance[];
  private next = 0;
  /** Requests answered by each instance, by index. */
  readonly answered: number[];

  constructor(servers: Instance[]) {
    this.servers = servers;
    this.answered = servers.map(() => 0);
  }

  /** The instance the next request goes to. */
  peek(): number {
    return this.next % this.servers.length;
  }

  async get<T>(path: string, token: string) {
    const index = this.peek();
    this.next++;
    this.answered[index] = (this.answered[index] ?? 0) + 1;
    const answer = await http<T>(`${(this.servers[index] as Instance).base}/api/v1`, path, { token });
    return { ...answer, instance: index };
  }
}

// PostgreSQL streaming replicas for the API's reads (read-routing.ts): a pool per replica, and a health check
// every CHECK_INTERVAL_MS that skips a replica which does not answer, is no longer in recovery (promoted), or
// whose replay lag exceeds the limit, and takes it back once it passes again.
//
// The lag is measured against the primary's WAL position, not the replay timestamp: on an idle primary
// `now() - pg_last_xact_replay_timestamp()` grows without anything being missed, and would skip a replica
// that is up to date. Each check samples the primary's pg_current_wal_lsn(); a replica whose
// pg_last_wal_replay_lsn() has reached the latest sample lags 0 s, else it lags since the first sample it has
// not reached: it has been missing WAL that the primary had written by then.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { kyselyRunner } from '../prepared.ts';
import type { ReadTarget, ReplicaSettings, ReplicaState, Replicas } from '../read-routing.ts';
import type { DB } from '../schema.ts';
import { openPostgresSnapshot } from './snapshot.ts';

/** Opens a pool of connections to `url` whose silent connections can be dropped (open.ts). */
export type OpenPool = (
  url: string,
  poolMax: number,
) => Promise<{
  db: Kysely<DB>;
  sockets: { limitSilence(ms: number): void };
  ownConnection: () => Kysely<DB>;
}>;

/** How often each replica (and the primary's WAL position) is checked. */
export const CHECK_INTERVAL_MS = 1000;
/** A check that gets no answer in this long finds the replica not answering. */
const CHECK_ANSWER_MS = 2000;

interface Sample {
  at: number;
  lsn: bigint;
}

interface Watched {
  target: ReadTarget;
  healthy: boolean;
  lagSeconds: number | null;
  /** Why it was last skipped (logged once per outage). */
  reason: string | undefined;
}

/** `X/Y` (a pg_lsn as text) as a number. */
export function parseLsn(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** The replicas at `urls`, checked once before this resolves and then every CHECK_INTERVAL_MS. */
export async function openPostgresReplicas(
  primary: Kysely<DB>,
  settings: ReplicaSettings,
  openPool: OpenPool,
): Promise<Replicas> {
  const watched: Watched[] = [];
  for (const url of settings.urls) {
    const { db, sockets, ownConnection } = await openPool(url, settings.poolMax);
    sockets.limitSilence(settings.answerTimeoutMs);
    const target: ReadTarget = {
      name: replicaName(url),
      kind: 'replica',
      db,
      run: kyselyRunner(db),
      openSnapshot: () => openPostgresSnapshot(ownConnection),
    };
    watched.push({ target, healthy: false, lagSeconds: null, reason: undefined });
  }
  // Each process starts at a replica of its own choosing: instances spread over the replicas, and one
  // instance keeps to one while it is healthy (its page versions and pages come from the same one).
  const start = Math.floor(Math.random() * watched.length);
  const order = watched.map((_, i) => watched[(start + i) % watched.length] as Watched);
  const samples: Sample[] = [];
  const keepMs = settings.maxLagMs + 10 * CHECK_INTERVAL_MS;

  const skip = (replica: Watched, reason: string) => {
    // Logged when it is skipped, not at every check while it stays so.
    const wasHealthy = replica.healthy || replica.reason === undefined;
    replica.healthy = false;
    if (wasHealthy) {
      settings.onEvent({
        kind: 'skipped',
        name: replica.target.name,
        reason,
        lagSeconds: replica.lagSeconds,
      });
    }
    replica.reason = reason;
  };

  const lagOf = (lsn: bigint, now: number): number | null => {
    const latest = samples.at(-1);
    if (!latest) return null;
    if (lsn >= latest.lsn) return 0;
    const missing = samples.find((sample) => sample.lsn > lsn) ?? latest;
    return Math.max(0, (now - missing.at) / 1000);
  };

  const checkOne = async (replica: Watched) => {
    let row: { recovery: boolean; lsn: string | null } | undefined;
    try {
      row = await answerIn(
        sql<{
          recovery: boolean;
          lsn: string | null;
        }>`select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as lsn`
          .execute(replica.target.db)
          .then((result) => result.rows[0]),
      );
    } catch (error) {
      replica.lagSeconds = null;
      skip(replica, `does not answer: ${(error as Error).message}`);
      return;
    }
    if (!row?.recovery || row.lsn === null) {
      replica.lagSeconds = null;
      skip(replica, 'is not a replica (not in recovery: promoted, or a primary)');
      return;
    }
    const lag = lagOf(parseLsn(row.lsn), Date.now());
    replica.lagSeconds = lag;
    if (lag === null) {
      if (!replica.healthy) skip(replica, 'lag unknown: the primary does not answer');
      return;
    }
    if (lag * 1000 > settings.maxLagMs) {
      skip(replica, `replay lag ${lag.toFixed(1)} s is over the limit of ${settings.maxLagMs / 1000} s`);
      return;
    }
    if (!replica.healthy) {
      replica.healthy = true;
      replica.reason = undefined;
      settings.onEvent({ kind: 'recovered', name: replica.target.name, lagSeconds: lag });
    }
  };

  const check = async () => {
    try {
      const { rows } = await answerIn(
        sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary),
      );
      const now = Date.now();
      samples.push({ at: now, lsn: parseLsn(rows[0]?.lsn ?? '0/0') });
      while (samples.length > 1 && (samples[0] as Sample).at < now - keepMs) samples.shift();
    } catch {
      // The primary does not answer: the replicas keep the lag of their last check until it does.
    }
    await Promise.all(watched.map(checkOne));
  };

  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const loop = async () => {
    await check();
    if (!stopped) timer = setTimeout(loop, CHECK_INTERVAL_MS);
  };
  await loop();

  return {
    pick: () => order.find((replica) => replica.healthy)?.target,
    failed(target, error) {
      const replica = watched.find((one) => one.target === target);
      if (replica) skip(replica, `a read failed: ${(error as Error).message}`);
    },
    states: (): ReplicaState[] =>
      watched.map(({ target, healthy, lagSeconds }) => ({ name: target.name, healthy, lagSeconds })),
    async close() {
      stopped = true;
      clearTimeout(timer);
      await Promise.all(watched.map((replica) => replica.target.db.destroy()));
    },
  };
}

/** The replica's address for logs and metrics: host:port/database, without user or password. */
function replicaName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
  } catch {
    return 'replica';
  }
}

function answerIn<T>(query: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_ANSWER_MS} ms`)), CHECK_ANSWER_MS);
  });
  return Promise.race([query, late]).finally(() => clearTimeout(timer));
}

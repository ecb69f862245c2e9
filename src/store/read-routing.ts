// Where the API's reads run (docs/architecture.md, "Reads from replicas"): on a replica that answers and is
// within the lag limit, else on the primary. A read that needs a position (the feed after a cursor, a game a
// feed page showed) says whether the replica's answer reflects it; if not, or if the replica fails, it runs
// again on the primary. Writes, migrations, OAuth, the webhook outbox and token look-ups never come here: they
// run on the primary (StoreContext.db and StoreContext.reader).
import type { Kysely } from 'kysely';
import type { RunQuery } from './prepared.ts';
import type { DB } from './schema.ts';

export interface ReadTarget {
  /** `primary`, or the replica's host:port/database (no password). */
  readonly name: string;
  readonly kind: 'primary' | 'replica';
  readonly db: Kysely<DB>;
  readonly run: RunQuery;
  /**
   * A snapshot of this node on a connection of its own (an export's: game-export.ts); the primary's is the
   * adapter's (DialectAdapter.openSnapshot).
   */
  readonly openSnapshot?: () => Promise<{ db: Kysely<DB>; end(): Promise<void> }>;
}

/** One replica as the health check last found it. */
export interface ReplicaState {
  readonly name: string;
  /** Whether reads go to it: it answered its last check and was within the lag limit. */
  readonly healthy: boolean;
  /** How far its replay is behind the primary, in seconds; null while unknown (it does not answer). */
  readonly lagSeconds: number | null;
}

/** What the health check tells of a replica: skipped (why) or taken back. */
export type ReplicaEvent =
  | { kind: 'skipped'; name: string; reason: string; lagSeconds: number | null }
  | { kind: 'recovered'; name: string; lagSeconds: number };

/** A dialect's replicas, watched by their health check (postgres/replicas.ts). */
export interface Replicas {
  /** The replica reads go to now, or undefined when none is healthy. */
  pick(): ReadTarget | undefined;
  /** A read on `target` failed: it is skipped until its health check passes again. */
  failed(target: ReadTarget, error: unknown): void;
  states(): ReplicaState[];
  close(): Promise<void>;
}

export interface ReplicaSettings {
  urls: readonly string[];
  /** A replica whose replay is further behind than this is skipped. */
  maxLagMs: number;
  /** A connection silent this long is dropped (PG_ANSWER_TIMEOUT), as on the primary. */
  answerTimeoutMs: number;
  /** Connections per replica. */
  poolMax: number;
  /** Told when a replica is skipped or taken back. */
  onEvent: (event: ReplicaEvent) => void;
}

/**
 * Whether a replica's answer stands: `fresh`; `behind`: the replica has not replayed the position the read
 * needs (a fallback); `confirm`: the answer is read on the primary by design (an empty long-poll page).
 */
export type Freshness = 'fresh' | 'behind' | 'confirm';

/** Why a read meant for a replica ran on the primary. */
export type FallbackReason = 'unavailable' | 'behind' | 'error';

export interface ReadCounts {
  primary: number;
  replica: number;
  fallbacks: Record<FallbackReason, number>;
}

export class ReadRouting {
  readonly primary: ReadTarget;
  private replicas: Replicas | undefined;
  /** The API's reads by where they ran, and the fallbacks: what /metrics reports. */
  readonly counts: ReadCounts = {
    primary: 0,
    replica: 0,
    fallbacks: { unavailable: 0, behind: 0, error: 0 },
  };

  constructor(primary: ReadTarget) {
    this.primary = primary;
  }

  /** From now on reads go to these replicas where they can. */
  use(replicas: Replicas): void {
    this.replicas = replicas;
  }

  /** Each replica's state (none without replicas). */
  states(): ReplicaState[] {
    return this.replicas?.states() ?? [];
  }

  /**
   * read() on a healthy replica, whose answer stands if fresh() says so; else, and when the replica fails or
   * none is healthy, read() on the primary.
   */
  async read<T>(
    read: (target: ReadTarget) => Promise<T>,
    fresh?: (answer: T, target: ReadTarget) => Freshness | Promise<Freshness>,
  ): Promise<T> {
    const { replicas } = this;
    const replica = replicas?.pick();
    if (replicas && !replica) this.counts.fallbacks.unavailable++;
    if (replicas && replica) {
      try {
        this.counts.replica++;
        const answer = await read(replica);
        const freshness = fresh ? await fresh(answer, replica) : 'fresh';
        if (freshness === 'fresh') return answer;
        if (freshness === 'behind') this.counts.fallbacks.behind++;
      } catch (error) {
        replicas.failed(replica, error);
        this.counts.fallbacks.error++;
      }
    }
    this.counts.primary++;
    return read(this.primary);
  }

  /** A RunQuery that counts the primary's reads (the token look-ups of every request). */
  countingPrimary(run: RunQuery): RunQuery {
    return (text, parameters) => {
      this.counts.primary++;
      return run(text, parameters);
    };
  }

  async close(): Promise<void> {
    await this.replicas?.close();
  }
}

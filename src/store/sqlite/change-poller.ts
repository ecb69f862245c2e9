// SQLite: commits of other processes (the CLI's imports, updates, moves, deletes), heard by polling the
// store's change counter, the `change` row of `sequences`. One poller per process, whatever the number of
// waiters, running only while someone subscribes. Every write that changes games raises the counter inside
// its transaction, and the store's writes commit one at a time in seq order (StoreContext.write): so a
// counter above the last one read means commits since, and each of their games carries a seq above that last
// value. The owners of those games are found among the subscribed ones, by the (owner_id, seq) index.
import { type Kysely, sql } from 'kysely';
import type { SignalSink, SignalSource } from '../change-signals.ts';
import type { DB } from '../schema.ts';

/** How often the counter is read while someone waits: a commit of another process is heard within this. */
export const SQLITE_POLL_INTERVAL_MS = 100;

/** Owners asked about in one statement (SQLite takes at most 32,766 parameters). */
const OWNERS_PER_QUERY = 500;

export class SqliteChangePoller implements SignalSource {
  private sink: SignalSink | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The counter as last read; undefined until the first read after a start. */
  private seen: number | undefined;
  private running = false;
  private polling = false;
  private stopped = false;

  private readonly db: Kysely<DB>;
  private readonly intervalMs: number;

  constructor(db: Kysely<DB>, intervalMs = SQLITE_POLL_INTERVAL_MS) {
    this.db = db;
    this.intervalMs = intervalMs;
  }

  start(sink: SignalSink): void {
    if (this.stopped || this.running) return;
    this.sink = sink;
    this.running = true;
    this.seen = undefined;
    // A poll still under way from before idle() schedules the next one when it ends.
    if (!this.polling) this.schedule(0);
  }

  idle(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.idle();
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    this.polling = true;
    try {
      await this.poll();
    } catch {
      // The store is busy or gone for a moment: the next tick reads again, from the same last value.
    }
    this.polling = false;
    if (this.running && this.timer === undefined) this.schedule(this.intervalMs);
  }

  private async poll(): Promise<void> {
    const sink = this.sink;
    if (!sink) return;
    const counter = await changeCounter(this.db);
    const seen = this.seen;
    if (seen === undefined || counter < seen) {
      // First read since the start: commits since a subscriber last read may be unknown. Lower: the store
      // was replaced (restored from a backup). Either way, every subscriber reads again.
      this.seen = counter;
      if (this.running) sink.missed();
      return;
    }
    if (counter === seen) return;
    // The owners subscribed now: one who subscribed later read the store after the counter was read, and
    // a change it did not see there has a seq above the counter, which the next poll finds.
    const owners = [...sink.owners()];
    const changed: string[] = [];
    for (let i = 0; i < owners.length; i += OWNERS_PER_QUERY) {
      changed.push(...(await ownersChangedAfter(this.db, owners.slice(i, i + OWNERS_PER_QUERY), seen)));
    }
    this.seen = counter;
    if (changed.length > 0 || sink.anyListening) sink.committedAmong(changed);
  }
}

async function changeCounter(db: Kysely<DB>): Promise<number> {
  const { rows } = await sql<{ value: number }>`
    select value from sequences where name = 'change'`.execute(db);
  return Number(rows[0]?.value ?? 0);
}

/** Those of the owners with a game written after seq. */
async function ownersChangedAfter(db: Kysely<DB>, owners: string[], seq: number): Promise<string[]> {
  if (owners.length === 0) return [];
  const rows = await db
    .selectFrom('games')
    .select('owner_id')
    .distinct()
    .where('owner_id', 'in', owners)
    .where('seq', '>', seq)
    .execute();
  return rows.map((row) => row.owner_id);
}

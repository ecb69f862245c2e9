// The change sequence values and change times that writes give the games they write (docs/design.md 18), as
// every write transaction takes them (StoreContext.write) and the migrations that write changes too. Each
// dialect takes them its own way (sqlite/changes.ts, postgres/changes.ts), both keeping the order
// StoreContext.write explains: per owner, seq order is commit order, and the change time never goes
// backwards.

/** The change sequence values and change time a write takes for the games it writes. */
export interface ChangeAllocation {
  /** n values, increasing (consecutive on SQLite, maybe with gaps on PostgreSQL). */
  seqs: number[];
  /** The change time: the updatedAt of every game written by the transaction. */
  now: number;
}

export interface Changes {
  take(n: number): Promise<ChangeAllocation>;
}

/** A migration's changes, one game at a time, as a write of the game's owner takes them. */
export type MigrationChanges = (ownerId: string) => Promise<{ seq: number; now: number }>;

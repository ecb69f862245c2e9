// The feed, `store.feed`: an owner's games in the order they changed (tombstones included), read after a
// change sequence value (compiled once: every long-poll reads it again at each signal), and where `since`
// starts it.
import type { StoreContext } from './context.ts';
import { prepared } from './prepared.ts';
import { changeColumns, expandedChangeColumns, type GameRow, toChange, toExpandedChange } from './rows.ts';
import type { ExpandedChange, GameChange } from './types.ts';

export class Feed {
  private readonly ctx: StoreContext;
  private readonly itemsAfter;
  private readonly expandedAfter;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    // An owner's feed after a seq, on the (owner_id, seq) index: the items, or the items with their games.
    const after = <C extends typeof changeColumns | typeof expandedChangeColumns>(columns: C) =>
      prepared<[string, number, number], Pick<GameRow, C[number]>>(
        ctx.reader,
        3,
        (ownerId: string, afterSeq: number, limit: number) =>
          ctx.db
            .selectFrom('games')
            .select(columns)
            .where('owner_id', '=', ownerId)
            .where('seq', '>', afterSeq)
            .orderBy('seq')
            .limit(limit),
      );
    this.itemsAfter = after(changeColumns);
    this.expandedAfter = after(expandedChangeColumns);
  }

  /** The owner's games (tombstones included) changed after a sequence value, oldest change first. */
  async changes(ownerId: string, afterSeq: number, limit: number): Promise<GameChange[]> {
    const rows = await this.itemsAfter(ownerId, afterSeq, limit);
    return rows.map(toChange);
  }

  /**
   * `changes` with each live game's detail, as `store.games.get` gives it, read by the same statement: one
   * query for the page, and every item and its detail from one snapshot.
   */
  async expandedChanges(ownerId: string, afterSeq: number, limit: number): Promise<ExpandedChange[]> {
    const rows = await this.expandedAfter(ownerId, afterSeq, limit);
    return rows.map(toExpandedChange);
  }

  /** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
  async lastSeq(): Promise<number> {
    return this.ctx.adapter.lastSeq(this.ctx.db);
  }

  /**
   * The feed position just before the owner's first change at or after a time; the feed continues from there
   * by seq. A binary search over seq on the (owner_id, seq) index, valid because updated_at never decreases
   * as seq grows for one owner (StoreContext.write): about log2(seq) index seeks instead of a scan.
   */
  async positionAt(ownerId: string, sinceMs: number): Promise<number> {
    // Every committed seq is <= `end`. A write of the owner that commits during the search gets a seq above
    // all of the owner's seqs the search can see (StoreContext.write; on PostgreSQL it may be <= end, but it
    // is still above `low`, which is always one of them), so it lies after the position whatever the search
    // decides. Each step's statement sees the owner's changes up to some seq, all of them.
    const end = await this.lastSeq();
    // Invariant: the owner's games with seq <= low changed before sinceMs, those with seq >= high at or
    // after.
    let low = 0;
    let high = end + 1;
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      const next = await this.ctx.db
        .selectFrom('games')
        .select(['seq', 'updated_at'])
        .where('owner_id', '=', ownerId)
        .where('seq', '>=', mid)
        .where('seq', '<', high)
        .orderBy('seq')
        .limit(1)
        .executeTakeFirst();
      if (!next || Number(next.updated_at) >= sinceMs) high = mid;
      else low = Number(next.seq);
    }
    return low;
  }
}

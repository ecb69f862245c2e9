// The feed, `store.feed`: an owner's games in the order they changed (tombstones included), read after a
// change sequence value (compiled once: every long-poll reads it again at each signal), and where `since`
// starts it.
import { sql } from 'kysely';
import type { StoreContext } from './context.ts';
import { prepared, type RunQuery } from './prepared.ts';
import type { Freshness } from './read-routing.ts';
import { changeColumns, expandedChangeColumns, type GameRow, toChange, toExpandedChange } from './rows.ts';
import type { ExpandedChange, GameChange } from './types.ts';

export class Feed {
  private readonly ctx: StoreContext;
  private readonly itemsAfter;
  private readonly expandedAfter;
  /** The owner's highest seq, on the (owner_id, seq) index: how far a node has replayed the owner's changes. */
  private readonly head;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    // Built on the primary's runner, run on the target that read-routing.ts picks (Prepared.on).
    // An owner's feed after a seq, on the (owner_id, seq) index: the items, or the items with their games.
    const after = <C extends typeof changeColumns | typeof expandedChangeColumns>(columns: C) =>
      prepared<[string, number, number], Pick<GameRow, C[number]>>(
        ctx.reads.primary.run,
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
    this.head = prepared(ctx.reads.primary.run, 1, (ownerId: string) =>
      ctx.db
        .selectFrom('games')
        .select((eb) => eb.fn.max('seq').as('head'))
        .where('owner_id', '=', ownerId),
    );
  }

  /**
   * The owner's games (tombstones included) changed after a sequence value, oldest change first. On a
   * replica, a page reflects at least the position it starts from (docs/architecture.md, "Reads from
   * replicas"); with `confirmEmpty` (a long-poll) an empty page is read on the primary.
   */
  async changes(
    ownerId: string,
    afterSeq: number,
    limit: number,
    confirmEmpty = false,
  ): Promise<GameChange[]> {
    const rows = await this.ctx.reads.read(
      ({ run }) => this.itemsAfter.on(run)(ownerId, afterSeq, limit),
      (page, { run }) => this.reflects(page, run, ownerId, afterSeq, confirmEmpty),
    );
    return rows.map(toChange);
  }

  /**
   * `changes` with each live game's detail, as `store.games.get` gives it, read by the same statement: one
   * query for the page, and every item and its detail from one snapshot.
   */
  async expandedChanges(
    ownerId: string,
    afterSeq: number,
    limit: number,
    confirmEmpty = false,
  ): Promise<ExpandedChange[]> {
    const rows = await this.ctx.reads.read(
      ({ run }) => this.expandedAfter.on(run)(ownerId, afterSeq, limit),
      (page, { run }) => this.reflects(page, run, ownerId, afterSeq, confirmEmpty),
    );
    return rows.map(toExpandedChange);
  }

  /**
   * Whether a replica's page stands. A page with changes does: per owner the replica has replayed a prefix
   * of the primary's commits in seq order, so it holds every change of the owner up to the page's last seq.
   * An empty page stands if the replica has replayed the position it starts from (the owner's highest seq
   * there is at least it): what it lacks lies after the cursor, which the client meets later. A long-poll's
   * empty page does not: a commit signalled before or during the wait may not be on the replica yet.
   */
  private async reflects(
    page: readonly unknown[],
    run: RunQuery,
    ownerId: string,
    afterSeq: number,
    confirmEmpty: boolean,
  ): Promise<Freshness> {
    if (page.length > 0) return 'fresh';
    if (confirmEmpty) return 'confirm';
    return (await this.headOn(run, ownerId)) >= afterSeq ? 'fresh' : 'behind';
  }

  private async headOn(run: RunQuery, ownerId: string): Promise<number> {
    const [row] = await this.head.on(run)(ownerId);
    return Number(row?.head ?? 0);
  }

  /**
   * Whether a cursor's position is past every change the store has made: it was issued before the store was
   * restored from an older backup. A position the owner's feed has reached is not (one look-up where the API
   * reads); only one beyond it is checked against the primary's last seq.
   */
  async isAhead(ownerId: string, position: number): Promise<boolean> {
    const head = await this.ctx.reads.read(({ run }) => this.headOn(run, ownerId));
    return head < position && position > (await this.lastSeq());
  }

  /** The highest change sequence value taken so far (on PostgreSQL possibly not committed yet). */
  async lastSeq(): Promise<number> {
    return this.ctx.adapter.lastSeq(this.ctx.db);
  }

  /**
   * The feed position just before the owner's first change at or after a time; the feed continues from there
   * by seq. A binary search over seq on the (owner_id, seq) index, valid because updated_at never decreases
   * as seq grows for one owner (StoreContext.write): about log2(seq) index seeks instead of a scan, in one
   * statement (a recursive query, each step a probe or what it tells) rather than a round trip each.
   */
  async positionAt(ownerId: string, sinceMs: number): Promise<number> {
    // Every committed seq is <= `end`. A write of the owner that commits during the search gets a seq above
    // all of the owner's seqs the search can see (StoreContext.write; on PostgreSQL it may be <= end, but it
    // is still above `low`, which is always one of them), so it lies after the position whatever the search
    // decides. The statement sees the owner's changes up to some seq, all of them.
    const end = await this.lastSeq();
    // Invariant: the owner's games with seq <= low changed before sinceMs, those with seq >= high at or
    // after. A probe reads the first change in [mid, high): its seq when it is before sinceMs, -1 when at or
    // after, null when there is none.
    const { rows } = await sql<{ low: number | string | null }>`
      with recursive search(low, high, v, probed) as (
        select cast(0 as bigint), cast(${end + 1} as bigint), cast(null as bigint), 0
        union all
        select
          case when probed = 1 and v > 0 then v else low end,
          case when probed = 1 and (v is null or v < 0) then (low + high) / 2 else high end,
          case when probed = 0 then (
            select case when g.updated_at >= ${sinceMs} then -1 else g.seq end
            from games g
            where g.owner_id = ${ownerId} and g.seq >= (search.low + search.high) / 2 and g.seq < search.high
            order by g.seq limit 1
          ) end,
          1 - probed
        from search
        where probed = 1 or high - low > 1
      )
      select max(low) as low from search`.execute(this.ctx.db);
    return Number(rows[0]?.low ?? 0);
  }
}

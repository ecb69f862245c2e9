// The reads of games (lists, one game, totals, a version stamp, a database's PGN export), most of them behind
// every API request and compiled once (prepared.ts). `store.games` is a Games (game-writes.ts), which adds
// the writes to these.
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { type ExportOptions, type ExportScope, GameExport } from './game-export.ts';
import { type GameFilter, whereGameFilter } from './game-filter.ts';
import { prepared, type RunQuery } from './prepared.ts';
import { detailColumns, summaryColumns, toDetail, toSummary } from './rows.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';
import type { GameDetail, ListedGame, Page } from './types.ts';

export { EXPORT_BATCH_BYTES, EXPORT_BATCH_GAMES, type ExportOptions } from './game-export.ts';

/** What a write to a live game reads of it first (game-writes.ts). */
export interface LiveGame {
  pk: number;
  id: string;
  owner_id: string;
  database_id: string;
  content_hash: string;
}

export function liveGame(db: Executor, id: string): Promise<LiveGame | undefined> {
  return db
    .selectFrom('games')
    .select(['pk', 'id', 'owner_id', 'database_id', 'content_hash'])
    .where('id', '=', id)
    .where('deleted', '=', 0)
    .executeTakeFirst();
}

/** The reads of games behind every API request, built and compiled once per store. */
function compiledReads(ctx: StoreContext) {
  const { db } = ctx;
  // Built on the primary's runner, and run on the target that read-routing.ts picks (Prepared.on).
  const reader = ctx.reads.primary.run;
  // An offset is walked entry by entry down the (scope, deleted, pk) index (and on PostgreSQL each row
  // skipped is read): `after` lets a page that starts where an earlier one ended seek there instead.
  const liveGames = (scope: 'owner_id' | 'database_id') =>
    prepared(reader, 4, (value: string, after: number, limit: number, offset: number) =>
      db
        .selectFrom('games')
        .select([...summaryColumns, 'pk'])
        .where(scope, '=', value)
        .where('deleted', '=', 0)
        .where('pk', '>', after)
        .orderBy('pk')
        .limit(limit)
        .offset(offset),
    );
  return {
    owner_id: liveGames('owner_id'),
    database_id: liveGames('database_id'),
    // The owner's (owner_id, seq) index answers it from its last entry.
    version: prepared(reader, 1, (ownerId: string) =>
      db
        .selectFrom('games')
        .select((eb) => eb.fn.max('seq').as('version'))
        .where('owner_id', '=', ownerId),
    ),
    // The owner's few databases, on the databases_owner_slug index.
    total: prepared(reader, 1, (ownerId: string) =>
      db
        .selectFrom('databases')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('game_count'), eb.lit(0)).as('total'))
        .where('owner_id', '=', ownerId)
        .where('deleted_at', 'is', null),
    ),
    game: prepared(reader, 2, (ownerId: string, id: string) =>
      db
        .selectFrom('games')
        .selectAll()
        .where('id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('deleted', '=', 0),
    ),
  };
}

/**
 * The most games made before an updatedSince position and changed after it whose filtered page sorts them
 * (listFiltered): sorting 10,000 rows costs about what reading that many costs.
 */
const SORTED_CHANGES = 10_000;

/**
 * How a filtered page reads updatedSince's matches (listFiltered): the games made since its time, a run at
 * the list's end from pk `first` on, in list order; the games made before it and changed since (pk below
 * `first`, on games_owner_changed), sorted when `sorted` (few) or else in list order.
 */
export interface ChangedSplit {
  first: number;
  sorted: boolean;
}

/** The most tombstones of an owner that a filter's count reads to count on the filter's index alone. */
const TOMBSTONES_READ = 1000;

/**
 * Whether every condition of the filter is on the columns of one filter index (game-filter.ts), led by the
 * owner: a date range, updatedSince (the feed's (owner_id, seq)), a result, an ECO code or prefix, an event, or
 * a player's name or FIDE id with a colour.
 */
function onOneIndex(filter: GameFilter): boolean {
  const named = (Object.keys(filter) as (keyof GameFilter)[]).filter((name) => filter[name] !== undefined);
  const player = named.includes('player') || named.includes('fideId');
  if (player !== named.includes('color')) return false;
  return [
    ['dateFrom', 'dateTo'],
    ['afterSeq'],
    ['result'],
    ['eco'],
    ['event'],
    ['player', 'color'],
    ['fideId', 'color'],
  ].some((columns) => named.length > 0 && named.every((name) => columns.includes(name)));
}

/**
 * Whether the filter is a player's name or FIDE id alone, without a colour: on two indexes, the white and the
 * black side's, counted on both (countOnIndex).
 */
function onBothSides(filter: GameFilter): boolean {
  const named = (Object.keys(filter) as (keyof GameFilter)[]).filter((name) => filter[name] !== undefined);
  return named.length === 1 && (named[0] === 'player' || named[0] === 'fideId');
}

export class GameReads {
  protected readonly ctx: StoreContext;
  private readonly compiled: ReturnType<typeof compiledReads>;

  constructor(ctx: StoreContext) {
    this.ctx = ctx;
    this.compiled = compiledReads(ctx);
  }

  /** The owner's live games across all databases, in import order. */
  async list(ownerId: string, page: Page): Promise<ListedGame[]> {
    return this.liveGames('owner_id', ownerId, page);
  }

  /** One database's live games, in import order. */
  async listInDatabase(databaseId: string, page: Page): Promise<ListedGame[]> {
    return this.liveGames('database_id', databaseId, page);
  }

  private async liveGames(
    scope: 'owner_id' | 'database_id',
    value: string,
    page: Page,
  ): Promise<ListedGame[]> {
    const query = this.compiled[scope];
    const rows = await this.ctx.reads.read(({ run }) =>
      query.on(run)(value, page.after ?? 0, page.limit, page.offset),
    );
    return rows.map((row) => ({ ...toSummary(row), position: Number(row.pk) }));
  }

  /**
   * The owner's live games (of one database, or of all) that match the filter, in import order: built per
   * request, as the filters combine freely; each is served by an index (game-filter.ts).
   */
  async listFiltered(scope: ExportScope & { filter: GameFilter }, page: Page): Promise<ListedGame[]> {
    const { afterSeq } = scope.filter;
    const split = afterSeq === undefined ? undefined : await this.changedSplit(scope.ownerId, afterSeq);
    // Nothing changed after the position: no game matches.
    if (afterSeq !== undefined && !split) return [];
    const rows =
      !split && scope.databaseId === undefined && !(await this.hasTombstones(scope.ownerId))
        ? await this.pageByPk(scope, page).execute()
        : await this.filteredPage(scope, page, split).execute();
    return rows.map((row) => ({ ...toSummary(row), position: Number(row.pk) }));
  }

  /**
   * Where updatedSince's matches (seq > afterSeq) lie, in one statement: the owner's first live game made at
   * or after the time of the first change after afterSeq (`first`), and whether at most SORTED_CHANGES games
   * made before that time changed after it. Per owner, a game made later has a higher pk and a created_at no
   * earlier (StoreContext.write takes both under the owner's lock, the change time never decreasing), so the
   * games at and after `first` are the ones made since, found by a binary search over pk on games_owner_list
   * (about log2(pk) one-row probes, each game's created_at read); each match before `first` was made before
   * that time and changed at or after it (updated_at > created_at): it is on the partial index
   * games_owner_changed (migration 0016). The matches are mostly the newest games, at the end of the list,
   * where PostgreSQL, which knows how many they are but not where, walked the list from its start: at
   * 1,000,000 games, 940,000 rows read for the last 60,000. Undefined when nothing changed after afterSeq.
   */
  async changedSplit(ownerId: string, afterSeq: number): Promise<ChangedSplit | undefined> {
    // The binary search keeps the live games made since the time among [lo, top) and `best`: each probe
    // reads the first live game in [mid, top), its pk signed by whether it was made since (+) or before (-).
    const { rows } = await sql<{ first: number | string | null; changed: number | string }>`
      with recursive search(lo, top, best, v, probed) as (
        select cast(0 as bigint), m, m, cast(null as bigint), 0
        from (select coalesce(max(pk), 0) + 1 as m from games where owner_id = ${ownerId} and deleted = 0) last
        union all
        select
          case when probed = 0 then lo when v is null or v > 0 then lo else 1 - v end,
          case when probed = 0 then top when v is null or v > 0 then (lo + top) / 2 else top end,
          case when probed = 1 and v > 0 then v else best end,
          case when probed = 0 then (
            select case when g.created_at >= (
              select c.updated_at from games c where c.owner_id = ${ownerId} and c.seq > ${afterSeq} order by c.seq limit 1
            ) then g.pk else -g.pk end
            from games g
            where g.owner_id = ${ownerId} and g.deleted = 0 and g.pk >= (search.lo + search.top) / 2 and g.pk < search.top
            order by g.pk limit 1
          ) end,
          1 - probed
        from search
        where probed = 1 or lo < top
      )
      select
        case when exists (select 1 from games where owner_id = ${ownerId} and seq > ${afterSeq})
          then (select min(best) from search) end as first,
        (select count(*) from (
          select 1 from games
          where owner_id = ${ownerId} and seq > ${afterSeq} and updated_at > created_at
          limit ${SORTED_CHANGES + 1}
        ) changed) as changed`.execute(this.ctx.db);
    const row = rows[0];
    if (!row || row.first === null) return undefined;
    return { first: Number(row.first), sorted: Number(row.changed) <= SORTED_CHANGES };
  }

  /**
   * The statement of a filtered page (listFiltered), not run: one part in list order, or the parts
   * (inListOrder) each cut at offset + limit and merged by pk. With `split` (updatedSince, changedSplit), each
   * part is read as the games made since (pk from split.first on, in list order) and those made before and
   * changed since (on games_owner_changed), sorted by pk when split.sorted (`pk + 0` is no index's order),
   * which a few matches spread anywhere in the list want. test/store/filter-indexes.test.ts reads its plans.
   */
  filteredPage(scope: ExportScope & { filter: GameFilter }, page: Page, split?: ChangedSplit) {
    const after = page.after ?? 0;
    const listed = (part: ReturnType<typeof this.inListOrder>[number]) =>
      part.select([...summaryColumns, 'pk']).where('pk', '>', after);
    const { afterSeq } = scope.filter;
    const parts =
      !split || afterSeq === undefined
        ? this.inListOrder(scope).map((part) => ({ query: listed(part), sorted: false }))
        : [
            ...this.inListOrder(scope).map((part) => ({
              query: listed(part).where('pk', '<', split.first).where(sql<boolean>`updated_at > created_at`),
              sorted: split.sorted,
            })),
            // seq checked on each row (`seq + 0` is no index's column): the games made since all match but
            // those of the time's first millisecond, so the list is walked from `first`, where the planner,
            // which takes pk and seq for independent, could read every match on the seq index and sort them.
            ...this.inListOrder({ ...scope, filter: { ...scope.filter, afterSeq: undefined } }).map(
              (part) => ({
                query: listed(part).where('pk', '>=', split.first).where(sql<number>`seq + 0`, '>', afterSeq),
                sorted: false,
              }),
            ),
          ];
    const order = (sorted: boolean) => (sorted ? sql<number>`pk + 0` : sql<number>`pk`);
    const [first, ...others] = parts;
    if (!first) throw new Error('a filter has at least one part');
    if (others.length === 0) {
      return first.query.orderBy(order(first.sorted)).limit(page.limit).offset(page.offset);
    }
    const cut = ({ query, sorted }: typeof first) =>
      this.ctx.db
        .selectFrom(
          query
            .orderBy(order(sorted))
            .limit(page.offset + page.limit)
            .as('part'),
        )
        .selectAll();
    return this.ctx.db
      .selectFrom(others.reduce((union, part) => union.unionAll(cut(part)), cut(first)).as('parts'))
      .selectAll()
      .orderBy('pk')
      .limit(page.limit)
      .offset(page.offset);
  }

  /** Whether any of the owner's games is a tombstone (on games_owner_list alone). */
  private async hasTombstones(ownerId: string): Promise<boolean> {
    const row = await this.ctx.db
      .selectFrom('games')
      .select('pk')
      .where('owner_id', '=', ownerId)
      .where('deleted', '=', 1)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * filteredPage for an owner without tombstones, where every match on a filter index is a live game: the
   * page's pks read on the filter indexes alone (index-only, as the parts need no `deleted` from the row),
   * then the page's rows by pk. A page at offset 450 reads 51 rows instead of 501, which a filter's matches
   * spread over the table each read from a page of their own. A game deleted between the check and the page
   * is on the page as a read just before its deletion would have it (not left out, which would leave the
   * page a game short and say that the list ends there).
   */
  pageByPk(scope: ExportScope & { filter: GameFilter }, page: Page) {
    const { db } = this.ctx;
    const parts = this.inListOrder(scope, false).map((part) =>
      part.select('pk').where('pk', '>', page.after ?? 0),
    );
    const [first, ...others] = parts;
    if (!first) throw new Error('a filter has at least one part');
    const cut = (part: typeof first) =>
      db
        .selectFrom(
          part
            .orderBy('pk')
            .limit(page.offset + page.limit)
            .as('part'),
        )
        .select('part.pk');
    const pks =
      others.length === 0
        ? first.orderBy('pk').limit(page.limit).offset(page.offset)
        : db
            .selectFrom(others.reduce((union, part) => union.unionAll(cut(part)), cut(first)).as('parts'))
            .select('parts.pk')
            .orderBy('pk')
            .limit(page.limit)
            .offset(page.offset);
    return db
      .selectFrom('games')
      .select([...summaryColumns, 'pk'])
      .where('pk', 'in', db.selectFrom(pks.as('page')).select('page.pk'))
      .orderBy('pk');
  }

  /**
   * The filter's games as disjoint parts that an index each gives in list order, so that a page reads at most
   * offset + limit games of each part and merges them by pk (listFiltered); one part when one index does.
   * Two conditions are split so: a player without a colour (white OR black), which PostgreSQL otherwise
   * serves by reading every match of both indexes and sorting them, whatever the page; and a two-character
   * ECO prefix (B9: the ten codes B90 to B99), whose range comes from the index in code order, not list
   * order, so that the planner walks the owner's whole list instead. A game whose both sides match is in the
   * white side's part only.
   */
  private inListOrder(scope: ExportScope & { filter: GameFilter }, live = true) {
    const { filter } = scope;
    const filters =
      filter.eco?.length === 2
        ? Array.from({ length: 10 }, (_, digit) => ({ ...filter, eco: `${filter.eco}${digit}` }))
        : [filter];
    return filters.flatMap((one) => {
      if ((one.player === undefined && one.fideId === undefined) || one.color !== undefined) {
        return [this.filtered({ ...scope, filter: one }, live)];
      }
      const white = this.filtered({ ...scope, filter: { ...one, color: 'white' } }, live);
      const black = this.filtered({ ...scope, filter: { ...one, color: 'black' } }, live).where((eb) =>
        eb.or([
          ...(one.player !== undefined ? [eb('white_name', 'is distinct from', one.player)] : []),
          ...(one.fideId !== undefined ? [eb('white_fide_id', 'is distinct from', one.fideId)] : []),
        ]),
      );
      return [white, black];
    });
  }

  /**
   * How many of the owner's live games (of one database, or of all) match the filter: counted, on the
   * filter's index. With `upTo`, the count stops after `upTo + 1` matches (a LIMIT under the count), so that
   * a broad filter reads a bounded number of index entries: an answer above `upTo` says only that more
   * than `upTo` match.
   */
  async countFiltered(scope: ExportScope & { filter: GameFilter }, upTo?: number): Promise<number> {
    if (scope.databaseId === undefined && (onOneIndex(scope.filter) || onBothSides(scope.filter))) {
      const counted = await this.countOnIndex(scope.ownerId, scope.filter, upTo);
      if (counted !== undefined) return counted;
    }
    if (upTo === undefined) {
      const row = await this.filtered(scope)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirst();
      return Number(row?.total ?? 0);
    }
    const row = await this.ctx.db
      .selectFrom(
        this.filtered(scope)
          .select('pk')
          .limit(upTo + 1)
          .as('matches'),
      )
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirst();
    return Number(row?.total ?? 0);
  }

  /**
   * countFiltered on the filter's index alone, without reading a row: whether a game is live is on its row
   * (`deleted`), which no filter index holds, so the index's matches (live games and tombstones) are counted,
   * all of them or up to `upTo + 1` beyond the tombstones that match, and the matching tombstones taken off. Those are found
   * among the owner's tombstones (on games_owner_list, rows read): undefined when the owner has more than
   * TOMBSTONES_READ of them, for the caller's count over the rows.
   */
  private async countOnIndex(
    ownerId: string,
    filter: GameFilter,
    upTo: number | undefined,
  ): Promise<number | undefined> {
    const { db } = this.ctx;
    const count = async (query: SelectQueryBuilder<DB, 'games', object>, limit?: number) => {
      const limited =
        limit === undefined
          ? query.select(sql.lit(1).as('one'))
          : query.select(sql.lit(1).as('one')).limit(limit);
      const row = await db
        .selectFrom(limited.as('matches'))
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirst();
      return Number(row?.total ?? 0);
    };
    const owners = db.selectFrom('games').where('owner_id', '=', ownerId);
    const tombstones = owners.where('deleted', '=', 1);
    if ((await count(tombstones, TOMBSTONES_READ + 1)) > TOMBSTONES_READ) return undefined;
    const dead = await count(tombstones.where((eb) => whereGameFilter(eb, filter)));
    const enough = upTo === undefined ? undefined : upTo + 1 + dead;
    if (onBothSides(filter)) return this.countBothSides(ownerId, filter, dead, enough);
    const all = await count(
      owners.where((eb) => whereGameFilter(eb, filter)),
      enough,
    );
    return Math.max(0, all - dead);
  }

  /**
   * countOnIndex for a player (name or FIDE id) without a colour: the white side's matches and the black
   * side's, each counted on its index alone, less the games where the player is on both sides (the two
   * indexes' pks intersected, still without a row read) and the `dead` matching tombstones. With `enough`
   * (upTo + 1 + dead), no side's count reads more than `enough` plus the games on both sides: a side that
   * reaches that says the total is above upTo.
   */
  private async countBothSides(
    ownerId: string,
    filter: GameFilter,
    dead: number,
    enough: number | undefined,
  ): Promise<number> {
    const { db } = this.ctx;
    const sideOf = (color: 'white' | 'black') =>
      db
        .selectFrom('games')
        .select('pk')
        .where('owner_id', '=', ownerId)
        .where((eb) => whereGameFilter(eb, { ...filter, color }));
    const count = async (query: ReturnType<typeof sideOf>, limit: number | undefined) => {
      const row = await db
        .selectFrom((limit === undefined ? query : query.limit(limit)).as('matches'))
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirst();
      return Number(row?.total ?? 0);
    };
    const both = await count(
      // A LIMIT after INTERSECT limits the intersection.
      sideOf('white').intersect(sideOf('black')),
      enough,
    );
    // As many on both sides as `enough`: the white side alone holds more than upTo live games.
    if (enough !== undefined && both >= enough) return enough - dead;
    const limit = enough === undefined ? undefined : enough + both;
    const white = await count(sideOf('white'), limit);
    const black = await count(sideOf('black'), limit);
    if (limit !== undefined && (white >= limit || black >= limit)) return enough as number;
    return Math.max(0, white + black - both - dead);
  }

  /** The filter's games of the scope: the live ones, or with `live` false tombstones too. */
  private filtered({ ownerId, databaseId, filter }: ExportScope & { filter: GameFilter }, live = true) {
    let query = this.ctx.db.selectFrom('games').where('owner_id', '=', ownerId);
    if (live) query = query.where('deleted', '=', 0);
    query = query.where((eb) => whereGameFilter(eb, filter));
    if (databaseId !== undefined) query = query.where('database_id', '=', databaseId);
    return query;
  }

  /** The owner's live games across all databases: the sum of the databases' kept counts (migration 0011). */
  async total(ownerId: string): Promise<number> {
    const [row] = await this.ctx.reads.read(({ run }) => this.compiled.total.on(run)(ownerId));
    return Number(row?.total ?? 0);
  }

  /**
   * A number that changes whenever any of the owner's games changes: the highest change sequence among
   * the owner's rows. Every write to a game (import, update, move, delete, a database's deletion) gives
   * the row a new seq above all earlier ones and no game row is ever removed, so the number only rises;
   * per owner, seq order is commit order (StoreContext.write), so equal numbers mean equal game data.
   */
  async version(ownerId: string): Promise<number> {
    return this.ctx.reads.read(({ run }) => this.versionOn(run, ownerId));
  }

  private async versionOn(run: RunQuery, ownerId: string): Promise<number> {
    const [row] = await this.compiled.version.on(run)(ownerId);
    return Number(row?.version ?? 0);
  }

  /**
   * One of the owner's live games by UUID. With `minSeq` (the position of a feed page that showed it), the
   * answer reflects at least the owner's changes up to that seq: a replica that has not replayed them
   * (its owner's highest seq is below) is passed over for the primary (docs/architecture.md, "Reads from
   * replicas"), so a game the page showed is never missing, nor older than the page showed it. There the
   * head is read before the game: replay only moves forward, so the game's read then sees at least every
   * change up to that head; read after it, a head that replay had just raised would vouch for a game read
   * before it arrived.
   */
  async get(ownerId: string, id: string, minSeq?: number): Promise<GameDetail | undefined> {
    if (!storable(id)) return undefined;
    const { row } = await this.ctx.reads.read(
      async ({ kind, run }) => {
        const head = minSeq !== undefined && kind === 'replica' ? await this.versionOn(run, ownerId) : 0;
        const [found] = await this.compiled.game.on(run)(ownerId, id);
        return { row: found, head };
      },
      minSeq === undefined
        ? undefined
        : ({ row: found, head }) =>
            (found && Number(found.seq) >= minSeq) || head >= minSeq ? 'fresh' : 'behind',
    );
    return row && toDetail(row);
  }

  /**
   * The owner's live games among these UUIDs, in the order given; another owner's and unknown ids are left
   * out alike: one statement on the id index, the owner checked on the row as for `get`.
   */
  async byIds(ownerId: string, ids: readonly string[]): Promise<GameDetail[]> {
    const wanted = ids.filter(storable);
    if (wanted.length === 0) return [];
    const rows = await this.ctx.db
      .selectFrom('games')
      .select(detailColumns)
      .where('id', 'in', wanted)
      .where('owner_id', '=', ownerId)
      .where('deleted', '=', 0)
      .execute();
    const byId = new Map(rows.map((row) => [row.id, toDetail(row)]));
    return wanted.flatMap((id) => byId.get(id) ?? []);
  }

  /**
   * An export of the owner's games (of one database, or of all), read from one snapshot of the store, with
   * the feed position that continues after it (game-export.ts). The caller walks it or ends it.
   */
  openExport(scope: ExportScope): Promise<GameExport> {
    return GameExport.open(this.ctx, scope);
  }

  /** The id and PGN of every live game of a database in import order, from one snapshot (openExport). */
  async *databasePgn(
    databaseId: string,
    options: ExportOptions = {},
  ): AsyncGenerator<{ id: string; pgn: string }> {
    const database = await this.ctx.db
      .selectFrom('databases')
      .select('owner_id')
      .where('id', '=', databaseId)
      .executeTakeFirst();
    if (!database) return;
    const games = await this.openExport({ ownerId: database.owner_id, databaseId });
    yield* games.pgn(options);
  }

  /** A live game by UUID, whoever owns it (the operator's view). */
  async findLive(id: string): Promise<{ id: string; ownerId: string; databaseId: string } | undefined> {
    if (!storable(id)) return undefined;
    const row = await liveGame(this.ctx.db, id);
    return row && { id: row.id, ownerId: row.owner_id, databaseId: row.database_id };
  }
}

// The reads of games (lists, one game, totals, a version stamp, a database's PGN export), most of them behind
// every API request and compiled once (prepared.ts). `store.games` is a Games (game-writes.ts), which adds
// the writes to these.
import { sql } from 'kysely';
import type { Executor, StoreContext } from './context.ts';
import { prepared, type RunQuery } from './prepared.ts';
import { summaryColumns, toDetail, toSummary } from './rows.ts';
import { storable } from './storable.ts';
import type { GameDetail, ListedGame, Page } from './types.ts';

/**
 * PGN bytes one batch of a database's export reads at most (unless one game is larger), and games at most.
 * SQLite reads a batch in one synchronous call, which holds the server's event loop (every other request)
 * meanwhile: small batches keep that short, and cost no throughput (docs/performance.md).
 */
export const EXPORT_BATCH_BYTES = 256 * 1024;
export const EXPORT_BATCH_GAMES = 250;

export interface ExportOptions {
  /** Most games per batch (default EXPORT_BATCH_GAMES). */
  batchSize?: number;
  /** Most PGN bytes per batch, unless a single game is larger (default EXPORT_BATCH_BYTES). */
  batchBytes?: number;
  /**
   * Awaited before each batch after the first; what it throws ends the export (the API re-checks the
   * request's token there: an export ends with its token).
   */
  beforeBatch?: () => Promise<void>;
}

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
  // A database's live games after a pk, for the export's batches.
  const exported = (databaseId: string, after: number) =>
    db
      .selectFrom('games')
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .where('pk', '>', after)
      .orderBy('pk');
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
    // The export's two reads of a batch: building and compiling a Kysely query costs more than SQLite takes
    // to read a small batch, and an export reads hundreds of batches. First the pk and PGN size of the next
    // `limit` games (octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST), then the id
    // and PGN of those up to `last`.
    exportSizes: prepared(reader, 3, (databaseId: string, after: number, limit: number) =>
      exported(databaseId, after)
        .select(['pk', sql<number>`octet_length(pgn)`.as('bytes')])
        .limit(limit),
    ),
    exportGames: prepared(reader, 3, (databaseId: string, after: number, last: number) =>
      exported(databaseId, after).select(['id', 'pgn']).where('pk', '<=', last),
    ),
  };
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
   * replicas"), so a game the page showed is never missing, nor older than the page showed it.
   */
  async get(ownerId: string, id: string, minSeq?: number): Promise<GameDetail | undefined> {
    if (!storable(id)) return undefined;
    const [row] = await this.ctx.reads.read(
      ({ run }) => this.compiled.game.on(run)(ownerId, id),
      minSeq === undefined
        ? undefined
        : async ([found], { run }) =>
            (found && Number(found.seq) >= minSeq) || (await this.versionOn(run, ownerId)) >= minSeq
              ? 'fresh'
              : 'behind',
    );
    return row && toDetail(row);
  }

  /**
   * The id and PGN of every live game of a database in import order, read in keyset batches of at most
   * `batchSize` games and, unless a single game is larger, `batchBytes` bytes (constant memory). Each batch
   * is its own statement: a client that reads slowly holds no transaction or connection open.
   */
  async *databasePgn(
    databaseId: string,
    { batchSize = EXPORT_BATCH_GAMES, batchBytes = EXPORT_BATCH_BYTES, beforeBatch }: ExportOptions = {},
  ): AsyncGenerator<{ id: string; pgn: string }> {
    const { exportSizes, exportGames } = this.compiled;
    let after = 0;
    for (;;) {
      if (after > 0) await beforeBatch?.();
      // The sizes first: a batch of a thousand engine games with long comments runs to tens of MB, which
      // SQLite would read in one synchronous call (stalling the event loop) and each export would hold while
      // its client read it.
      const sizes = await this.ctx.reads.read(({ run }) => exportSizes.on(run)(databaseId, after, batchSize));
      if (sizes.length === 0) return;
      let end = 0;
      let bytes = 0;
      for (const row of sizes) {
        bytes += Number(row.bytes);
        if (end > 0 && bytes > batchBytes) break;
        end++;
      }
      const last = Number(sizes[end - 1]?.pk);
      yield* await this.ctx.reads.read(({ run }) => exportGames.on(run)(databaseId, after, last));
      if (end === sizes.length && sizes.length < batchSize) return;
      after = last;
    }
  }

  /** A live game by UUID, whoever owns it (the operator's view). */
  async findLive(id: string): Promise<{ id: string; ownerId: string; databaseId: string } | undefined> {
    if (!storable(id)) return undefined;
    const row = await liveGame(this.ctx.db, id);
    return row && { id: row.id, ownerId: row.owner_id, databaseId: row.database_id };
  }
}

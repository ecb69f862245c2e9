// Whole exports of an owner's games (the PGN and NDJSON exports of a database or of every database), read
// from one snapshot of the store (DialectAdapter.openSnapshot), with the feed position that continues exactly
// after it: a client that takes the export and then follows the feed from there misses no change and needs
// none twice.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { StoreSnapshot } from './adapter.ts';
import type { StoreContext } from './context.ts';
import { type GameFilter, isFiltered, whereGameFilter } from './game-filter.ts';
import { detailColumns, toDetailText } from './rows.ts';
import type { DB } from './schema.ts';
import type { GameDetailText } from './types.ts';

/**
 * PGN bytes one batch of an export reads at most (unless one game is larger), and games at most. SQLite
 * reads a batch in one synchronous call, which holds the server's event loop (every other request)
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

/** The games an export holds: the owner's, in one database or in all of them, narrowed by a filter. */
export interface ExportScope {
  ownerId: string;
  databaseId?: string;
  filter?: GameFilter;
}

export class GameExport {
  /**
   * The owner's highest change sequence value in the snapshot: the snapshot holds every change of the owner
   * up to it and none after (per owner, seq order is commit order: StoreContext.write), so the feed read
   * after it gives exactly the changes the export does not hold.
   */
  readonly seq: number;
  private readonly snapshot: StoreSnapshot;
  private readonly scope: ExportScope;

  private constructor(snapshot: StoreSnapshot, scope: ExportScope, seq: number) {
    this.snapshot = snapshot;
    this.scope = scope;
    this.seq = seq;
  }

  /**
   * Opens the snapshot, on a replica where the API reads one (read-routing.ts; the primary when none answers),
   * and reads its feed position first: that statement fixes the snapshot. A replica's snapshot is as old as
   * its replay, and its position says so: the feed after it, read on any node, gives what the export lacks.
   */
  static open(ctx: StoreContext, scope: ExportScope): Promise<GameExport> {
    return ctx.reads.read(async (target) => {
      const snapshot = await (target.openSnapshot?.() ?? ctx.adapter.openSnapshot(ctx.db));
      try {
        const row = await snapshot.db
          .selectFrom('games')
          .select((eb) => eb.fn.max('seq').as('seq'))
          .where('owner_id', '=', scope.ownerId)
          .executeTakeFirst();
        return new GameExport(snapshot, scope, Number(row?.seq ?? 0));
      } catch (error) {
        await snapshot.end();
        throw error;
      }
    });
  }

  /** Releases the snapshot; safe to call more than once, and called when a walk ends. */
  end(): Promise<void> {
    return this.snapshot.end();
  }

  /** The id and PGN of every game in scope, in import order. */
  pgn(options: ExportOptions = {}): AsyncGenerator<{ id: string; pgn: string }> {
    return this.walk(options, (db, after, last) =>
      this.games(db, after).select(['id', 'pgn']).where('pk', '<=', last).execute(),
    );
  }

  /**
   * Every game in scope as `store.games.get` gives it, in import order, its metadata left as the JSON text
   * the row holds (GameDetailText).
   */
  detailTexts(options: ExportOptions = {}): AsyncGenerator<GameDetailText> {
    return this.walk(options, async (db, after, last) => {
      const rows = await this.games(db, after).select(detailColumns).where('pk', '<=', last).execute();
      return rows.map(toDetailText);
    });
  }

  /** The live games in scope after a pk, in pk order. */
  private games(db: Kysely<DB>, after: number) {
    const { ownerId, databaseId, filter } = this.scope;
    let query = db
      .selectFrom('games')
      .where('owner_id', '=', ownerId)
      .where('deleted', '=', 0)
      .where('pk', '>', after)
      .orderBy('pk');
    if (databaseId !== undefined) query = query.where('database_id', '=', databaseId);
    if (isFiltered(filter)) query = query.where((eb) => whereGameFilter(eb, filter));
    return query;
  }

  /**
   * The games in keyset batches of at most `batchSize` games and, unless a single game is larger,
   * `batchBytes` PGN bytes (constant memory). Each batch is two statements in the snapshot: the pk and PGN
   * size of the next games (octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST),
   * then `read` of those up to the batch's last pk. The snapshot ends with the walk, however it ends.
   */
  private async *walk<T>(
    { batchSize = EXPORT_BATCH_GAMES, batchBytes = EXPORT_BATCH_BYTES, beforeBatch }: ExportOptions,
    read: (db: Kysely<DB>, after: number, last: number) => Promise<T[]>,
  ): AsyncGenerator<T> {
    const { db } = this.snapshot;
    try {
      let after = 0;
      for (;;) {
        if (after > 0) await beforeBatch?.();
        const sizes = await this.games(db, after)
          .select(['pk', sql<number>`octet_length(pgn)`.as('bytes')])
          .limit(batchSize)
          .execute();
        if (sizes.length === 0) return;
        let end = 0;
        let bytes = 0;
        for (const row of sizes) {
          bytes += Number(row.bytes);
          if (end > 0 && bytes > batchBytes) break;
          end++;
        }
        const last = Number(sizes[end - 1]?.pk);
        yield* await read(db, after, last);
        if (end === sizes.length && sizes.length < batchSize) return;
        after = last;
      }
    } finally {
      await this.end();
    }
  }
}

// Reads of games beyond the hot ones (Store keeps those compiled): a database's PGN export, and a live game
// found by id whoever owns it.
import { type Kysely, sql } from 'kysely';
import type { Executor } from './context.ts';
import { prepared, type RunQuery } from './prepared.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';

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

/**
 * The export's two reads of a batch, compiled once (hot-queries.ts): building and compiling a Kysely query
 * costs more than SQLite takes to read a small batch, and an export reads hundreds of batches.
 */
export interface ExportQueries {
  /** The pk and PGN size of the next `limit` live games after `after`. */
  exportSizes(databaseId: string, after: number, limit: number): Promise<{ pk: number; bytes: number }[]>;
  /** The id and PGN of the live games after `after` up to `last`. */
  exportGames(databaseId: string, after: number, last: number): Promise<{ id: string; pgn: string }[]>;
}

/** The export's reads as `hotQueries` builds them. */
export function exportQueries(db: Kysely<DB>, run: RunQuery): ExportQueries {
  const live = (databaseId: string, after: number) =>
    db
      .selectFrom('games')
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .where('pk', '>', after)
      .orderBy('pk');
  return {
    // octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST.
    exportSizes: prepared(run, 3, (databaseId: string, after: number, limit: number) =>
      live(databaseId, after)
        .select(['pk', sql<number>`octet_length(pgn)`.as('bytes')])
        .limit(limit),
    ),
    exportGames: prepared(run, 3, (databaseId: string, after: number, last: number) =>
      live(databaseId, after).select(['id', 'pgn']).where('pk', '<=', last),
    ),
  };
}

/**
 * The id and PGN of every live game of a database in import order, read in keyset batches of at most
 * `batchSize` games and, unless a single game is larger, `batchBytes` bytes (constant memory). Each batch is
 * its own statement: a client that reads slowly holds no transaction or connection open.
 */
export async function* databasePgn(
  queries: ExportQueries,
  databaseId: string,
  { batchSize = EXPORT_BATCH_GAMES, batchBytes = EXPORT_BATCH_BYTES, beforeBatch }: ExportOptions = {},
): AsyncGenerator<{ id: string; pgn: string }> {
  let after = 0;
  for (;;) {
    if (after > 0) await beforeBatch?.();
    // The sizes first: a batch of a thousand engine games with long comments runs to tens of MB, which
    // SQLite would read in one synchronous call (stalling the event loop) and each export would hold while
    // its client read it.
    const sizes = await queries.exportSizes(databaseId, after, batchSize);
    if (sizes.length === 0) return;
    let end = 0;
    let bytes = 0;
    for (const row of sizes) {
      bytes += Number(row.bytes);
      if (end > 0 && bytes > batchBytes) break;
      end++;
    }
    const last = Number(sizes[end - 1]?.pk);
    yield* await queries.exportGames(databaseId, after, last);
    if (end === sizes.length && sizes.length < batchSize) return;
    after = last;
  }
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

/** A live game by UUID, whoever owns it (the operator's view). */
export async function findLiveGame(
  db: Kysely<DB>,
  id: string,
): Promise<{ id: string; ownerId: string; databaseId: string } | undefined> {
  if (!storable(id)) return undefined;
  const row = await liveGame(db, id);
  return row && { id: row.id, ownerId: row.owner_id, databaseId: row.database_id };
}

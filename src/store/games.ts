// Reads of games beyond the hot ones (Store keeps those compiled): a database's PGN export, and a live game
// found by id whoever owns it.
import { type Kysely, sql } from 'kysely';
import type { Executor } from './context.ts';
import type { DB } from './schema.ts';
import { storable } from './storable.ts';

/** PGN bytes one batch of a database's export reads at most (unless one game is larger). */
export const EXPORT_BATCH_BYTES = 1 << 20;

/**
 * The id and PGN of every live game of a database in import order, read in keyset batches of at most
 * `batchSize` games and, unless a single game is larger, `batchBytes` bytes (constant memory). Each batch is
 * its own statement: a client that reads slowly holds no transaction or connection open.
 */
export async function* databasePgn(
  db: Kysely<DB>,
  databaseId: string,
  batchSize: number,
  batchBytes: number,
): AsyncGenerator<{ id: string; pgn: string }> {
  const live = (after: number) =>
    db
      .selectFrom('games')
      .where('database_id', '=', databaseId)
      .where('deleted', '=', 0)
      .where('pk', '>', after)
      .orderBy('pk');
  let after = 0;
  for (;;) {
    // The sizes first: octet_length reads neither SQLite's overflow pages nor PostgreSQL's TOAST. A batch of
    // a thousand engine games with long comments runs to tens of MB, which SQLite would read in one
    // synchronous call (stalling the event loop) and each export would hold while its client read it.
    const sizes = await live(after)
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
    const rows = await live(after).select(['id', 'pgn']).where('pk', '<=', last).execute();
    yield* rows;
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

// The write path of an import batch (Store.insertGames delegates here): skip games already in the database,
// keep within maxGames, take one change-sequence range, insert the rows.
//
// On SQLite this runs on the better-sqlite3 handle itself, with statements prepared once per store (the
// INSERTs in sqlite/game-rows.ts): building Kysely's multi-row INSERT (27 columns x 200 rows) and its dedup
// query cost more CPU than SQLite's writes (measured: most of the main thread of an import). It still runs
// inside Store.write()'s transaction: Kysely's SQLite dialect has one connection, and that handle is it.
// Its dedup check looks games up by key in memory, from the game_keys log (sqlite/game-keys.ts).
// PostgreSQL looks games up on its dedup index through Kysely, and writes the rows with one statement
// (postgres/game-rows.ts).

import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { contentColumns } from './game-columns.ts';
import { dedupKey } from './postgres/dedup-key.ts';
import { analyzeWhenStale, insertPostgresRows } from './postgres/game-rows.ts';
import type { DB, GameInsertRow } from './schema.ts';
import { gameKey, knownKeys, logKeys } from './sqlite/game-keys.ts';
import { insertGameRows } from './sqlite/game-rows.ts';
import type { Database, GameRecord, InsertOutcome } from './types.ts';

export interface GameBatch {
  /** The store's Kysely instance (finds the SQLite handle registered for it). */
  db: Kysely<DB>;
  /** The write transaction (Store.write). */
  trx: Kysely<DB>;
  database: Database;
  games: GameRecord[];
  allowDuplicates: boolean;
  /** n change sequence values and the change time, from the transaction. */
  take: (n: number) => Promise<{ seqs: number[]; now: number }>;
}

interface SqliteStatements {
  existing: Statement<[string, string], string>;
  count: Statement<[string], number>;
  touch: Statement<[number, number, string]>;
}

const handles = new WeakMap<Kysely<DB>, SqliteHandle>();
const prepared = new WeakMap<SqliteHandle, SqliteStatements>();

/** Lets insertGames write through `handle`, the one connection under the SQLite store `db` (connect.ts). */
export function registerSqliteHandle(db: Kysely<DB>, handle: SqliteHandle): void {
  handles.set(db, handle);
}

/** The SQLite connection under the store `db`, if it is one. */
export function sqliteHandleOf(db: Kysely<DB>): SqliteHandle | undefined {
  return handles.get(db);
}

function statementsOf(handle: SqliteHandle): SqliteStatements {
  let statements = prepared.get(handle);
  if (!statements) {
    statements = {
      existing: handle
        .prepare<[string, string], string>(
          // The rows that the game keys found (pks as a JSON array), whichever are still the database's.
          `select content_hash from games
            where pk in (select value from json_each(?)) and database_id = ? and deleted = 0`,
        )
        .pluck(),
      count: handle
        .prepare<[string], number>('select count(*) from games where database_id = ? and deleted = 0')
        .pluck(),
      touch: handle.prepare<[number, number, string]>(
        'update databases set updated_at = ?, games_seq = ? where id = ?',
      ),
    };
    prepared.set(handle, statements);
  }
  return statements;
}

/** Adds the batch's games to the database within the caller's write transaction. */
export async function insertGameBatch(batch: GameBatch): Promise<InsertOutcome> {
  const handle = handles.get(batch.db);
  return handle ? insertWithSqlite(batch, handle, statementsOf(handle)) : insertWithKysely(batch);
}

/** The games not already in the database (nor earlier in the batch), and how many were skipped. */
function withoutDuplicates(
  games: GameRecord[],
  known: (hash: string) => boolean,
): { fresh: GameRecord[]; duplicates: number } {
  const seen = new Set<string>();
  const fresh = games.filter((g) => {
    if (seen.has(g.contentHash) || known(g.contentHash)) return false;
    seen.add(g.contentHash);
    return true;
  });
  return { fresh, duplicates: games.length - fresh.length };
}

/** The games that fit under maxGames given `count` live games, and how many did not. */
function withinLimit(games: GameRecord[], maxGames: number, count: number) {
  const room = Math.max(0, maxGames - count);
  return { fresh: games.slice(0, room), overLimit: Math.max(0, games.length - room) };
}

// Random bytes for game ids, drawn for 1,024 milliseconds' ids at a time: asking the system for each id took
// 8% of an import's main thread on short games.
const ID_POOL_BYTES = 16 * 1024;
let idPool = new Uint8Array(0);
let idPoolAt = 0;
/** A game id's characters, written in place: the millisecond's part (the first 15) only when it changes. */
const ID_TEXT = Buffer.alloc(36);
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');
let lastMs = -1;
/** The last id's final 48 bits: the ids of one millisecond count up from a random start below 2^47. */
let counter = 0;

/** Writes the byte as two hex digits at `at` of ID_TEXT. */
function hexByte(at: number, byte: number): void {
  ID_TEXT[at] = HEX_DIGITS[byte >> 4] as number;
  ID_TEXT[at + 1] = HEX_DIGITS[byte & 15] as number;
}

/**
 * A new game's UUID, time-ordered (RFC 9562 version 7: 48 bits of Unix milliseconds, version 7, 74 random
 * bits, variant 10): the id index grows at its end, where a random UUID would dirty a page anywhere in it
 * for each new game and every commit would write all those pages again (bjbraams, 198k games: 8.1 -> 7.3 s).
 * Written here rather than with the uuid package's v7(): that one took 0.6 us an id (its options, a copy
 * of the bytes, a string of 36 concatenations made lower case), 5% of an import's main thread; this one
 * writes the characters into a buffer and decodes them at once, a flat string (a template literal made a
 * tree of strings that the slug's slice and SQLite's bind then copied again): about 0.15 us.
 *
 * The ids of one millisecond (a batch takes thousands) keep their order too (RFC 9562 6.2, method 2): the
 * first has random bits, the next ones its last 48 bits plus one. So ids sort in the order this process
 * made them, which is the order of the games in the store (DESIGN.md 12: oldest first, then id).
 */
export function gameId(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    const time = ms.toString(16).padStart(12, '0');
    ID_TEXT.write(`${time.slice(0, 8)}-${time.slice(8)}-7`, 0, 'latin1');
    if (idPoolAt === idPool.length) {
      idPool = randomBytes(ID_POOL_BYTES);
      idPoolAt = 0;
    }
    const r = idPool;
    const i = idPoolAt;
    idPoolAt += 16;
    ID_TEXT[15] = HEX_DIGITS[(r[i] as number) & 15] as number;
    hexByte(16, r[i + 1] as number);
    ID_TEXT[18] = 45; // '-'
    hexByte(19, ((r[i + 2] as number) & 0x3f) | 0x80);
    hexByte(21, r[i + 3] as number);
    ID_TEXT[23] = 45;
    // Below 2^47: the count cannot run past 48 bits within a millisecond.
    counter = ((r[i + 4] as number) & 0x7f) * 2 ** 40 + (r[i + 5] as number) * 2 ** 32 + readUint32(r, i + 6);
  } else counter++;
  const high = Math.floor(counter / 2 ** 24);
  const low = counter % 2 ** 24;
  hexByte(24, high >>> 16);
  hexByte(26, (high >>> 8) & 255);
  hexByte(28, high & 255);
  hexByte(30, low >>> 16);
  hexByte(32, (low >>> 8) & 255);
  hexByte(34, low & 255);
  return ID_TEXT.toString('latin1', 0, 36);
}

function readUint32(bytes: Uint8Array, at: number): number {
  return (
    (((bytes[at] as number) << 24) +
      ((bytes[at + 1] as number) << 16) +
      ((bytes[at + 2] as number) << 8) +
      (bytes[at + 3] as number)) >>>
    0
  );
}

async function rowsOf(
  batch: GameBatch,
  fresh: GameRecord[],
): Promise<{ rows: GameInsertRow[]; now: number }> {
  const { database } = batch;
  const { seqs, now } = await batch.take(fresh.length);
  const rows = fresh.map((game, i): GameInsertRow => {
    const id = gameId();
    return {
      id,
      owner_id: database.ownerId,
      database_id: database.id,
      seq: seqs[i] as number,
      ...contentColumns(game, id),
      dedup_key: dedupKey(database.id, game.contentHash),
      created_at: now,
      updated_at: now,
      deleted: 0,
    };
  });
  return { rows, now };
}

async function insertWithSqlite(
  batch: GameBatch,
  handle: SqliteHandle,
  statements: SqliteStatements,
): Promise<InsertOutcome> {
  const { database } = batch;
  let fresh = batch.games;
  let duplicates = 0;
  if (!batch.allowDuplicates) {
    const known = knownKeys(handle, database.id);
    const found: number[] = [];
    for (const game of fresh) known.find(gameKey(game.contentHash), found);
    // The rows found share a key with a game of the batch; the whole hash decides.
    const existing = new Set(
      found.length > 0 ? statements.existing.all(JSON.stringify(found), database.id) : [],
    );
    ({ fresh, duplicates } = withoutDuplicates(fresh, (hash) => existing.has(hash)));
  }
  let overLimit = 0;
  if (database.maxGames !== null) {
    const count = statements.count.get(database.id) ?? 0;
    ({ fresh, overLimit } = withinLimit(fresh, database.maxGames, count));
  }
  if (fresh.length === 0) return { inserted: 0, duplicates, overLimit, ids: [] };
  const { seqs, now } = await batch.take(fresh.length);
  const ids = fresh.map(() => gameId());
  const firstSeq = seqs[0] as number;
  // The row writer numbers the rows from the first seq (sqlite/game-rows.ts): take() gives consecutive ones.
  if (seqs.at(-1) !== firstSeq + fresh.length - 1) throw new Error('change sequence values not consecutive');
  const lastPk = insertGameRows(handle, {
    games: fresh,
    ids,
    firstSeq,
    ownerId: database.ownerId,
    databaseId: database.id,
    now,
  });
  // The rows took consecutive pks (AUTOINCREMENT, one writer at a time), the last one lastPk.
  logKeys(
    handle,
    database.id,
    lastPk - fresh.length + 1,
    fresh.map((g) => g.contentHash),
  );
  statements.touch.run(now, firstSeq + fresh.length - 1, database.id);
  return { inserted: ids.length, duplicates, overLimit, ids };
}

async function insertWithKysely(batch: GameBatch): Promise<InsertOutcome> {
  const { trx, database } = batch;
  let fresh = batch.games;
  let duplicates = 0;
  await analyzeWhenStale(trx);
  if (!batch.allowDuplicates) {
    const keys = [...new Set(fresh.map((g) => dedupKey(database.id, g.contentHash)))];
    const existing = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      // The rows found share a dedup key with a game of the batch; the whole hash decides. The rows are
      // found by key alone, in a MATERIALIZED CTE that the planner cannot merge with the database's
      // condition: given both, it took games_database_list whenever it believed the database small (stale
      // statistics), and read every row of the database for each lookup (126 ms after 198k games).
      const rows = await trx
        .with(
          (cte) => cte('found').materialized(),
          (db) =>
            db
              .selectFrom('games')
              .select(['content_hash', 'database_id', 'deleted'])
              .where('dedup_key', 'in', keys.slice(i, i + 500)),
        )
        .selectFrom('found')
        .select('content_hash')
        .where('database_id', '=', database.id)
        .where('deleted', '=', 0)
        .execute();
      for (const row of rows) existing.add(row.content_hash);
    }
    ({ fresh, duplicates } = withoutDuplicates(fresh, (hash) => existing.has(hash)));
  }
  let overLimit = 0;
  if (database.maxGames !== null) {
    const { n } = await trx
      .selectFrom('games')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('database_id', '=', database.id)
      .where('deleted', '=', 0)
      .executeTakeFirstOrThrow();
    ({ fresh, overLimit } = withinLimit(fresh, database.maxGames, Number(n)));
  }
  if (fresh.length === 0) return { inserted: 0, duplicates, overLimit, ids: [] };
  const { rows, now } = await rowsOf(batch, fresh);
  await insertPostgresRows(trx, rows);
  await trx
    .updateTable('databases')
    .set({ updated_at: now, games_seq: (rows.at(-1) as GameInsertRow).seq })
    .where('id', '=', database.id)
    .execute();
  return { inserted: rows.length, duplicates, overLimit, ids: rows.map((r) => r.id) };
}

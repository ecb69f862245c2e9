// SQLite: how an import finds the games a database already holds (migration 0005).
//
// An index on the games' content hashes takes its keys at random, and SQLite's WAL writes whole pages at each
// commit: every batch of an import would rewrite most of that index's pages, and an import slow down as its
// database grows, most of its time writing the WAL. Instead, each write that adds a game to a database, or
// gives one new content or a new database, appends its games' keys to the `game_keys` log (one row per batch,
// in the same transaction), and the importing process holds the keys of the database in memory (KeyTable): it
// reads the whole log of the database once, then, in each write transaction, the rows added since. The log
// only grows at its end. A key is 48 bits of the content hash and points to its games row (pk); the rows a
// key finds are then checked for their whole hash, their database and that they are live, so a stale entry (a
// game since changed, moved or deleted) finds nothing. PostgreSQL keeps its index (games_dedup_key): its WAL
// logs changed rows, not pages.
import { createHash } from 'node:crypto';
import type { Database as SqliteHandle, Statement } from 'better-sqlite3';
import { perConnection } from './handle.ts';
import { KeyTable } from './key-table.ts';

/** Bytes of a game key in the log: the first 48 bits of the content hash (12 hex digits). */
const KEY_BYTES = 6;

/** Each ASCII character's value as a hex digit, -1 for the others. */
const HEX_DIGIT = new Int8Array(128).fill(-1);
for (let d = 0; d < 16; d++) {
  HEX_DIGIT[d.toString(16).charCodeAt(0)] = d;
  HEX_DIGIT[d.toString(16).toUpperCase().charCodeAt(0)] = d;
}

/**
 * A game's key: the first 48 bits of its content hash (hex SHA-256, record.ts), as a number (exact below
 * 2^53). Any other text, which the store takes too, is hashed first. The digits are read one by one, faster
 * than Number() of a "0x..." slice, as this runs twice for each game imported.
 */
export function gameKey(contentHash: string): number {
  let key = 0;
  for (let i = 0; i < 2 * KEY_BYTES; i++) {
    const c = contentHash.charCodeAt(i); // NaN past the end
    const digit = c < 128 ? (HEX_DIGIT[c] as number) : -1;
    if (digit < 0) return otherKey(contentHash);
    key = key * 16 + digit;
  }
  return key;
}

/** gameKey of a text that does not start with 12 hex digits (as it always was: the log holds these keys). */
function otherKey(contentHash: string): number {
  const key =
    contentHash.length >= 2 * KEY_BYTES ? Number(`0x${contentHash.slice(0, 2 * KEY_BYTES)}`) : Number.NaN;
  return Number.isNaN(key) ? createHash('sha256').update(contentHash).digest().readUIntBE(0, KEY_BYTES) : key;
}

/** The log's keys of consecutive games rows, from firstPk on, as one blob. */
export function keysBlob(contentHashes: readonly string[]): Buffer {
  const blob = Buffer.allocUnsafe(contentHashes.length * KEY_BYTES);
  for (const [i, hash] of contentHashes.entries()) blob.writeUIntBE(gameKey(hash), i * KEY_BYTES, KEY_BYTES);
  return blob;
}

interface LogRow {
  id: number;
  first_pk: number;
  keys: Buffer;
}

interface Known {
  table: KeyTable;
  /** The last log row read into the table. */
  lastId: number;
}

interface Log {
  /** How many keys the database's log holds (the table's size, for a first read). */
  count: Statement<[string], number>;
  since: Statement<[string, number], LogRow>;
  append: Statement<[string, number, Buffer]>;
  known: Map<string, Known>;
}

const logOf = perConnection(
  (handle): Log => ({
    count: handle
      .prepare<[string], number>(
        `select coalesce(sum(length(keys)), 0) / ${KEY_BYTES} from game_keys where database_id = ?`,
      )
      .pluck(),
    since: handle.prepare<[string, number], LogRow>(
      'select id, first_pk, keys from game_keys where database_id = ? and id > ? order by id',
    ),
    append: handle.prepare<[string, number, Buffer]>(
      'insert into game_keys (database_id, first_pk, keys) values (?, ?, ?)',
    ),
    known: new Map(),
  }),
);

/**
 * The keys of the database's games, up to date with the log. Call it inside the write transaction that
 * checks for duplicates, before that transaction logs keys of its own: the transaction holds the store's
 * write lock, so no other process adds to the log before its commit, and the table takes only log rows
 * that are committed (a transaction rolled back leaves nothing in it).
 */
export function knownKeys(handle: SqliteHandle, databaseId: string): KeyTable {
  const log = logOf(handle);
  let known = log.known.get(databaseId);
  if (!known) {
    known = { table: new KeyTable(log.count.get(databaseId)), lastId: 0 };
    log.known.set(databaseId, known);
  }
  for (const row of log.since.iterate(databaseId, known.lastId)) {
    const { keys } = row;
    for (let i = 0, at = 0; at < keys.length; i++, at += KEY_BYTES) {
      // readUIntBE(at, 6), unrolled: twice as fast.
      const key =
        ((keys[at] as number) * 256 + (keys[at + 1] as number)) * 2 ** 32 + keys.readUInt32BE(at + 2);
      known.table.add(key, row.first_pk + i);
    }
    known.lastId = row.id;
  }
  return known.table;
}

/** Logs the keys of games rows firstPk, firstPk + 1, ... of the database, in the caller's transaction. */
export function logKeys(
  handle: SqliteHandle,
  databaseId: string,
  firstPk: number,
  contentHashes: readonly string[],
): void {
  if (contentHashes.length > 0) logOf(handle).append.run(databaseId, firstPk, keysBlob(contentHashes));
}

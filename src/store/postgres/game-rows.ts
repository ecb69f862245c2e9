// PostgreSQL: what an import batch does besides the dedup lookup (game-insert.ts): keep the games table's
// statistics fresh enough for the planner, and write the batch's rows with one statement.
import { type Kysely, sql } from 'kysely';
import type { DB, GameInsertRow } from '../schema.ts';

/**
 * PostgreSQL: the type of each column an import writes. A batch is inserted by one statement that binds one
 * array per column (INSERT ... SELECT FROM unnest): a multi-row VALUES list of 200 rows binds 5,200 values,
 * and the server parses each such statement anew.
 */
const PG_TYPES: Record<keyof GameInsertRow, string> = {
  id: 'text',
  owner_id: 'text',
  database_id: 'text',
  slug: 'text',
  seq: 'int8',
  event: 'text',
  date: 'text',
  result: 'text',
  eco: 'text',
  white_name: 'text',
  white_elo: 'int4',
  white_fide_id: 'text',
  white_country: 'text',
  black_name: 'text',
  black_elo: 'int4',
  black_fide_id: 'text',
  black_country: 'text',
  metadata: 'text',
  moves: 'text',
  fen: 'text',
  pgn: 'text',
  content_hash: 'text',
  dedup_key: 'text',
  created_at: 'int8',
  updated_at: 'int8',
  deleted: 'int4',
};
const PG_COLUMNS = Object.keys(PG_TYPES) as (keyof GameInsertRow)[];

/** Inserts the rows, in order, with one statement. */
export async function insertPostgresRows(trx: Kysely<DB>, rows: GameInsertRow[]): Promise<void> {
  const arrays = PG_COLUMNS.map(
    (column) => sql`${rows.map((row) => row[column])}::${sql.raw(PG_TYPES[column])}[]`,
  );
  // unnest() gives the rows in array order, and the insert takes them in that order (pk rises with seq).
  await sql`insert into games (${sql.join(PG_COLUMNS.map((column) => sql.ref(column)))})
    select * from unnest(${sql.join(arrays)})`.execute(trx);
}

/** Games added or changed since the last ANALYZE, beyond which an import analyses the games table. */
const ANALYZE_AFTER_CHANGES = 10_000;

/**
 * PostgreSQL: analyses the games table when it has more than doubled since its statistics were taken (and
 * by more than ANALYZE_AFTER_CHANGES games). Without statistics the planner guesses: for the dedup lookup
 * of 500 keys it chooses to read the whole table, and an import slows down quadratically. Autovacuum would
 * analyse it too, but only after its naptime (a minute), and a large import into an empty table is mostly
 * over by then. ANALYZE reads a sample of 30,000 rows at most.
 */
export async function analyzeWhenStale(trx: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ reltuples: number; changes: number }>`
    select c.reltuples::float8 as reltuples, s.n_mod_since_analyze::float8 as changes
    from pg_class c join pg_stat_user_tables s on s.relid = c.oid
    where c.oid = 'games'::regclass`.execute(trx);
  const stats = rows[0];
  if (stats && stats.changes > ANALYZE_AFTER_CHANGES && stats.changes > stats.reltuples) {
    await sql`analyze games`.execute(trx);
  }
}

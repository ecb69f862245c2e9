// 0004: the dedup key of 0003 becomes a column of its own that the application writes
// (postgres/game-insert.ts, dedupKey), and on SQLite the games table's foreign keys are checked at commit
// (DEFERRABLE INITIALLY DEFERRED). Together they let an import's multi-row INSERT OR FAIL run without a
// statement journal: SQLite keeps one for a statement that writes many rows and may fail halfway, which an
// index on expressions and an immediate foreign key both may. That journal takes a copy of each page a
// statement changes that an earlier statement of the transaction changed too, and the dedup index's random
// keys change pages all over, so the journal grows to gigabytes on a large import, written by its main
// thread. The constraint is the same; a violation fails the COMMIT, and the write is rolled back
// (StoreContext.write).
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const key = sql`substr(database_id, 1, 8) || substr(content_hash, 1, 12)`; // as dedupKey() makes it
  await { sqlite: remakeGames, postgres: addDedupKey }[dialect](db, key);
  await sql`create index games_dedup_key on games (dedup_key)`.execute(db);
  await { sqlite: async () => {}, postgres: dropDedupIndex }[dialect](db);
}

/** PostgreSQL: the column, filled from 0003's index expression. */
async function addDedupKey(db: Kysely<unknown>, key: RawBuilder<unknown>): Promise<void> {
  await sql`alter table games add column dedup_key text`.execute(db);
  await sql`update games set dedup_key = ${key}`.execute(db);
  await sql`alter table games alter column dedup_key set not null`.execute(db);
}

/**
 * SQLite cannot alter a constraint: the table is made anew (sqlite.org/lang_altertable.html, "other kinds of
 * table schema changes"), its rows copied with their pk, and its indexes remade.
 */
async function remakeGames(db: Kysely<unknown>, key: RawBuilder<unknown>): Promise<void> {
  await sql`
      create table games_new (
        pk integer primary key autoincrement,
        id text not null unique,
        owner_id text not null references users (id) deferrable initially deferred,
        database_id text not null references databases (id) deferrable initially deferred,
        slug text not null,
        seq integer not null,
        event text,
        date text,
        result text not null,
        eco text,
        white_name text,
        white_elo integer,
        white_fide_id text,
        white_country text,
        black_name text,
        black_elo integer,
        black_fide_id text,
        black_country text,
        metadata text not null,
        moves text not null,
        fen text not null,
        pgn text not null,
        content_hash text not null,
        created_at integer not null,
        updated_at integer not null,
        deleted integer default 0 not null,
        dedup_key text not null
      )`.execute(db);
  // games_new repeats 0001's columns in their order, with dedup_key after them.
  await sql`insert into games_new select *, ${key} from games`.execute(db);
  // AUTOINCREMENT: the new table goes on from the old one's last pk even if that row is gone.
  await sql`
      insert into sqlite_sequence (name, seq)
      select 'games_new', seq from sqlite_sequence where name = 'games'
        and not exists (select 1 from sqlite_sequence where name = 'games_new')`.execute(db);
  await sql`
      update sqlite_sequence set seq = (select max(seq) from sqlite_sequence where name in ('games', 'games_new'))
      where name = 'games_new'`.execute(db);
  await sql`drop table games`.execute(db);
  await sql`alter table games_new rename to games`.execute(db);
  await sql`create index games_owner_list on games (owner_id, deleted, pk)`.execute(db);
  await sql`create index games_database_list on games (database_id, deleted, pk)`.execute(db);
  await sql`create index games_owner_seq on games (owner_id, seq)`.execute(db);
}

/** PostgreSQL: 0003's index on the expression, which the column's index replaces. */
async function dropDedupIndex(db: Kysely<unknown>): Promise<void> {
  await sql`drop index games_dedup`.execute(db);
}

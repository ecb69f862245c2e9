// Versioned migrations, applied in name order on every start. Never edit one that has shipped: add a new one.
import { type Kysely, sql } from 'kysely';
import type { Migration, MigrationProvider } from 'kysely/migration';
import { normalizeGame } from '../chess/index.ts';
import { contentHashOf } from './content-hash.ts';
import { dedupKey } from './postgres/dedup-key.ts';
import { keysBlob } from './sqlite/game-keys.ts';

export type Dialect = 'sqlite' | 'postgres';

function migrations(dialect: Dialect): Record<string, Migration> {
  // Kysely's schema builder is untyped by design (tables do not exist yet), hence Kysely<unknown>.
  const bigint = dialect === 'postgres' ? 'bigint' : 'integer';
  return {
    '0001_initial': {
      async up(db: Kysely<unknown>) {
        await db.schema
          .createTable('users')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('login', 'text', (c) => c.notNull().unique())
          .addColumn('name', 'text')
          .addColumn('email', 'text')
          .addColumn('image', 'text')
          .addColumn('created_at', bigint, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('apps')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('name', 'text', (c) => c.notNull().unique())
          .addColumn('sector', 'text', (c) => c.notNull())
          .addColumn('created_at', bigint, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('tokens')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('hash', 'text', (c) => c.notNull().unique())
          .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
          .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id'))
          .addColumn('scopes', 'text', (c) => c.notNull())
          .addColumn('expires_at', bigint)
          .addColumn('revoked_at', bigint)
          .addColumn('created_at', bigint, (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('databases')
          .addColumn('id', 'text', (c) => c.primaryKey())
          .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
          .addColumn('name', 'text', (c) => c.notNull())
          .addColumn('slug', 'text', (c) => c.notNull())
          .addColumn('private', 'integer', (c) => c.notNull().defaultTo(0))
          .addColumn('max_games', 'integer')
          .addColumn('created_at', bigint, (c) => c.notNull())
          .addColumn('updated_at', bigint, (c) => c.notNull())
          .addColumn('deleted_at', bigint)
          .execute();
        await db.schema
          .createIndex('databases_owner_slug')
          .on('databases')
          .columns(['owner_id', 'slug'])
          .unique()
          .execute();
        await db.schema
          .createTable('games')
          .addColumn('pk', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
            dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
          )
          .addColumn('id', 'text', (c) => c.notNull().unique())
          .addColumn('owner_id', 'text', (c) => c.notNull().references('users.id'))
          .addColumn('database_id', 'text', (c) => c.notNull().references('databases.id'))
          .addColumn('slug', 'text', (c) => c.notNull())
          .addColumn('seq', bigint, (c) => c.notNull())
          .addColumn('event', 'text')
          .addColumn('date', 'text')
          .addColumn('result', 'text', (c) => c.notNull())
          .addColumn('eco', 'text')
          .addColumn('white_name', 'text')
          .addColumn('white_elo', 'integer')
          .addColumn('white_fide_id', 'text')
          .addColumn('white_country', 'text')
          .addColumn('black_name', 'text')
          .addColumn('black_elo', 'integer')
          .addColumn('black_fide_id', 'text')
          .addColumn('black_country', 'text')
          .addColumn('metadata', 'text', (c) => c.notNull())
          .addColumn('moves', 'text', (c) => c.notNull())
          .addColumn('fen', 'text', (c) => c.notNull())
          .addColumn('pgn', 'text', (c) => c.notNull())
          .addColumn('content_hash', 'text', (c) => c.notNull())
          .addColumn('created_at', bigint, (c) => c.notNull())
          .addColumn('updated_at', bigint, (c) => c.notNull())
          .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
          .execute();
        // Every query is scoped by owner (or by a database of the owner): these serve lists, the feed and dedup.
        await db.schema
          .createIndex('games_owner_list')
          .on('games')
          .columns(['owner_id', 'deleted', 'pk'])
          .execute();
        await db.schema
          .createIndex('games_database_list')
          .on('games')
          .columns(['database_id', 'deleted', 'pk'])
          .execute();
        await db.schema.createIndex('games_owner_seq').on('games').columns(['owner_id', 'seq']).execute();
        await db.schema
          .createIndex('games_database_hash')
          .on('games')
          .columns(['database_id', 'content_hash'])
          .execute();
        await db.schema
          .createTable('settings')
          .addColumn('key', 'text', (c) => c.primaryKey())
          .addColumn('value', 'text', (c) => c.notNull())
          .execute();
        await db.schema
          .createTable('sequences')
          .addColumn('name', 'text', (c) => c.primaryKey())
          .addColumn('value', bigint, (c) => c.notNull())
          .execute();
        await sql`insert into sequences (name, value) values ('change', 0)`.execute(db);
      },
    },
    '0002_postgres_feed': {
      // PostgreSQL only; SQLite keeps the `sequences` rows of 0001 (Store.write explains both).
      async up(db: Kysely<unknown>) {
        if (dialect !== 'postgres') return;
        // CACHE 1 (the default, spelled out): with a per-session cache a later nextval in another session
        // can return a smaller value, and the feed needs values that rise in the order they are taken.
        await sql`create sequence change_seq as bigint cache 1`.execute(db);
        await sql`select setval('change_seq', value) from sequences where name = 'change' and value > 0`.execute(
          db,
        );
        // A row per user who ever wrote: its row lock serialises that user's writers; it keeps their change time.
        await db.schema
          .createTable('feed_heads')
          .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id'))
          .addColumn('change_time', 'bigint', (c) => c.notNull())
          .execute();
        await sql`
          insert into feed_heads (user_id, change_time)
          select owner_id, max(updated_at) from games group by owner_id`.execute(db);
        await sql`delete from sequences where name in ('change', 'change_time')`.execute(db);
        // SQLite compares and sorts text by its bytes (BINARY). The "C" collation does the same on
        // PostgreSQL, whatever the database's default locale, so ties in list order break the same way
        // (games.database_id follows databases.id, the key it references).
        for (const [table, column] of [
          ['users', 'login'],
          ['apps', 'name'],
          ['tokens', 'id'],
          ['databases', 'id'],
          ['games', 'database_id'],
        ] as const) {
          await sql`alter table ${sql.table(table)} alter column ${sql.ref(column)} type text collate "C"`.execute(
            db,
          );
        }
      },
    },
    '0003_dedup_prefix_index': {
      // The dedup index of 0001 held the whole database id and content hash (about 110 bytes an entry) and
      // takes its keys at random, so each import commit rewrote most of its pages (bjbraams, 198k games: 13
      // of 32 us per inserted game). This one holds 8 characters of the database id and 12 of the hash (48
      // bits): a quarter of the pages. Lookups compare the whole hash on the rows it finds; they repeated
      // these expressions verbatim, or the index went unused (0004 made the key a column).
      async up(db: Kysely<unknown>) {
        await sql`create index games_dedup on games (substr(database_id, 1, 8), substr(content_hash, 1, 12))`.execute(
          db,
        );
        await db.schema.dropIndex('games_database_hash').execute();
      },
    },
    '0004_dedup_key_column': {
      // The dedup key of 0003 becomes a column of its own that the application writes (game-insert.ts,
      // dedupKey), and on SQLite the games table's foreign keys are checked at commit (DEFERRABLE INITIALLY
      // DEFERRED). Together they let an import's multi-row INSERT OR FAIL run without a statement journal:
      // SQLite keeps one for a statement that writes many rows and may fail halfway, which an index on
      // expressions and an immediate foreign key both may. That journal took a copy of each page a statement
      // changed that an earlier statement of the transaction had changed too, and the dedup index's random
      // keys change pages all over: 1 GB of temporary files for bjbraams' 198k games, written by the
      // import's main thread (measured: 0.3 of 1.2 s of CPU for SQLite's inserts). The constraint is the
      // same; a violation fails the COMMIT, and the write is rolled back (Store.write).
      async up(db: Kysely<unknown>) {
        const key = sql`substr(database_id, 1, 8) || substr(content_hash, 1, 12)`; // as dedupKey() makes it
        if (dialect === 'postgres') {
          await sql`alter table games add column dedup_key text`.execute(db);
          await sql`update games set dedup_key = ${key}`.execute(db);
          await sql`alter table games alter column dedup_key set not null`.execute(db);
        } else {
          // SQLite cannot alter a constraint: the table is made anew (sqlite.org/lang_altertable.html,
          // "other kinds of table schema changes"), its rows copied with their pk, and its indexes remade.
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
        await sql`create index games_dedup_key on games (dedup_key)`.execute(db);
        if (dialect === 'postgres') await sql`drop index games_dedup`.execute(db);
      },
    },
    '0005_sqlite_game_keys': {
      // SQLite only: the dedup index gives way to an append-only log of game keys (sqlite/game-keys.ts). With the
      // index, every import commit rewrote most of its pages, since its keys come at random: an import
      // into a database of 800k games took 2.8 times as long as into an empty one. The log holds, per
      // database, 48 bits of each live game's hash, one row per run of consecutive pks; dedup_key stays
      // empty in new rows. PostgreSQL keeps games_dedup_key (its WAL logs rows, not pages).
      async up(db: Kysely<unknown>) {
        if (dialect !== 'sqlite') return;
        await sql`
          create table game_keys (
            id integer primary key autoincrement,
            database_id text not null,
            first_pk integer not null,
            keys blob not null
          )`.execute(db);
        await sql`create index game_keys_database on game_keys (database_id, id)`.execute(db);
        await logExistingGameKeys(db);
        await sql`drop index games_dedup_key`.execute(db);
      },
    },
    '0006_export_result': {
      // A game without a valid Result tag was stored with the result "*", while its export PGN (Result tag
      // and terminator) took the result of its movetext's terminator: the API showed "*" next to a PGN that
      // says "0-1". This sets such games' result to their export's, as a change (a new seq and updatedAt),
      // so that feed readers get the corrected game too.
      async up(db: Kysely<unknown>) {
        await correctResults(db, dialect);
      },
    },
    '0007_database_games_seq': {
      // The PGN export's ETag was made of the database's live-game count and the highest seq among its
      // games, read on every export, HEAD and If-None-Match: a count of all its index entries, and a walk
      // down the owner's (owner_id, seq) index to the database's latest row, which read every newer game
      // of the owner's other databases (155 ms per request for a database of 138k games with 400k newer
      // ones, on the event loop). Every write to a database's games now records its seq on the database.
      // 0 stands for "no write since this migration": the tags of before it were made otherwise, and any
      // later write sets a seq above 0 that no other write has.
      async up(db: Kysely<unknown>) {
        await db.schema
          .alterTable('databases')
          .addColumn('games_seq', bigint, (c) => c.notNull().defaultTo(0))
          .execute();
      },
    },
    '0008_escape_lines_and_halfmove_clock': {
      // What this version writes otherwise than the earlier ones, in a few games: the export PGN could wrap a
      // comment right before a word starting with '%', which in a line's first column starts an escape line
      // (readers skip it, with the rest of the comment and its '}'); and the FEN capped the halfmove clock at
      // 150. A stored game whose export or FEN changes takes the present one (and the export's content hash, so
      // that importing its file again finds it), as a change (a new seq and updatedAt), like 0006.
      async up(db: Kysely<unknown>) {
        await renormalizeGames(db, dialect);
      },
    },
  };
}

/** The export's result (its first tag line `[Result "..."]`), when it is a game's result other than "*". */
const EXPORT_RESULT = /^\[Result "(1-0|0-1|1\/2-1\/2)"\]$/m;

/** Migration 0006: games stored with "*" whose export PGN has another result take it, as a new change. */
async function correctResults(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  let sqliteTime: number | undefined; // one change time for all on SQLite: one transaction
  for (let after = 0; ; ) {
    const { rows } = await sql<{ pk: number; owner_id: string; pgn: string }>`
      select pk, owner_id, pgn from games where pk > ${after} and result = '*' order by pk limit 10000`.execute(
      db,
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      // The tag section comes first, and a tag value cannot hold a line break: the first match is the tag.
      const result = EXPORT_RESULT.exec(row.pgn)?.[1];
      if (result === undefined) continue;
      let change: { seq: number; now: number };
      if (dialect === 'postgres') change = await takePostgresChange(db, row.owner_id);
      else {
        sqliteTime ??= await takeSqliteChangeTime(db);
        change = { seq: await takeSqliteSeq(db), now: sqliteTime };
      }
      await sql`update games set result = ${result}, seq = ${change.seq}, updated_at = ${change.now}
        where pk = ${row.pk}`.execute(db);
    }
    after = Number((rows.at(-1) as { pk: number }).pk);
  }
}

/**
 * Migration 0008: the live games whose export PGN has a line starting with '%' (only a comment's word can be
 * there) or whose FEN has a halfmove clock of 150 (maybe capped) are read again from their export, which gives
 * the game they were made of; those whose export or FEN the present version writes otherwise get it.
 */
async function renormalizeGames(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const escapeLine = '\n%';
  const clock150 = '% 150 %'; // the FEN's fifth field: the sixth, the fullmove number, ends it
  const found =
    dialect === 'postgres'
      ? sql`(strpos(pgn, ${escapeLine}) > 0 or fen like ${clock150})`
      : sql`(instr(pgn, ${escapeLine}) > 0 or fen like ${clock150})`;
  let sqliteTime: number | undefined; // one change time for all on SQLite: one transaction
  for (let after = 0; ; ) {
    const { rows } = await sql<{
      pk: number;
      owner_id: string;
      database_id: string;
      pgn: string;
      fen: string;
    }>`
      select pk, owner_id, database_id, pgn, fen from games where pk > ${after} and deleted = 0 and ${found}
      order by pk limit 1000`.execute(db);
    if (rows.length === 0) break;
    for (const row of rows) {
      const again = normalizeGame(row.pgn);
      if (!again.ok) continue;
      const { pgn, fen } = again.game;
      const newPgn = pgn !== row.pgn;
      if (!newPgn && fen === row.fen) continue;
      const hash = contentHashOf(pgn);
      let change: { seq: number; now: number };
      if (dialect === 'postgres') change = await takePostgresChange(db, row.owner_id);
      else {
        sqliteTime ??= await takeSqliteChangeTime(db);
        change = { seq: await takeSqliteSeq(db), now: sqliteTime };
      }
      await sql`update games set pgn = ${pgn}, content_hash = ${newPgn ? hash : sql`content_hash`},
        ${dialect === 'postgres' && newPgn ? sql`dedup_key = ${dedupKey(row.database_id, hash)},` : sql``}
        fen = ${fen}, seq = ${change.seq}, updated_at = ${change.now} where pk = ${row.pk}`.execute(db);
      // SQLite's key log (sqlite/game-keys.ts) takes the new key, as for a game updated with new content.
      if (dialect === 'sqlite' && newPgn)
        await sql`insert into game_keys (database_id, first_pk, keys)
          values (${row.database_id}, ${row.pk}, ${keysBlob([hash])})`.execute(db);
      await sql`update databases set updated_at = ${change.now}, games_seq = ${change.seq}
        where id = ${row.database_id}`.execute(db);
    }
    after = Number((rows.at(-1) as { pk: number }).pk);
  }
}

// A change sequence value and change time, as Store.write takes them for a write of the owner's: the seqs
// rise, and the time never goes backwards.

async function takePostgresChange(
  db: Kysely<unknown>,
  ownerId: string,
): Promise<{ seq: number; now: number }> {
  const head = await sql<{ change_time: number }>`
    insert into feed_heads (user_id, change_time) values (${ownerId}, ${Date.now()})
    on conflict (user_id) do update set change_time = greatest(feed_heads.change_time, excluded.change_time)
    returning change_time`.execute(db);
  const next = await sql<{ seq: number }>`select nextval('change_seq') as seq`.execute(db);
  return { seq: Number(next.rows[0]?.seq), now: Number(head.rows[0]?.change_time) };
}

async function takeSqliteSeq(db: Kysely<unknown>): Promise<number> {
  const next = await sql<{ value: number }>`
    update sequences set value = value + 1 where name = 'change' returning value`.execute(db);
  return Number(next.rows[0]?.value);
}

async function takeSqliteChangeTime(db: Kysely<unknown>): Promise<number> {
  const latest = await sql<{ t: number | null }>`select max(updated_at) as t from games`.execute(db);
  const time = await sql<{ value: number }>`
    insert into sequences (name, value) values ('change_time', ${Math.max(Date.now(), Number(latest.rows[0]?.t ?? 0))})
    on conflict (name) do update set value = max(value, excluded.value)
    returning value`.execute(db);
  return Number(time.rows[0]?.value);
}

/** Games per game_keys row that migration 0005 writes for the games already stored. */
const KEYS_PER_ROW = 4096;

/** Migration 0005: logs the keys of every live game, per database, in runs of consecutive pks. */
async function logExistingGameKeys(db: Kysely<unknown>): Promise<void> {
  const runs = new Map<string, { firstPk: number; hashes: string[] }>();
  const write = async (databaseId: string, run: { firstPk: number; hashes: string[] }) => {
    await sql`insert into game_keys (database_id, first_pk, keys)
      values (${databaseId}, ${run.firstPk}, ${keysBlob(run.hashes)})`.execute(db);
  };
  for (let after = 0; ; ) {
    const { rows } = await sql<{ pk: number; database_id: string; content_hash: string }>`
      select pk, database_id, content_hash from games where pk > ${after} and deleted = 0
      order by pk limit 10000`.execute(db);
    if (rows.length === 0) break;
    for (const row of rows) {
      const run = runs.get(row.database_id);
      if (run && run.firstPk + run.hashes.length === row.pk && run.hashes.length < KEYS_PER_ROW) {
        run.hashes.push(row.content_hash);
        continue;
      }
      if (run) await write(row.database_id, run);
      runs.set(row.database_id, { firstPk: row.pk, hashes: [row.content_hash] });
    }
    after = (rows.at(-1) as { pk: number }).pk;
  }
  for (const [databaseId, run] of runs) await write(databaseId, run);
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}

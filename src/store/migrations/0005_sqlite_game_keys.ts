// 0005, SQLite only: the dedup index gives way to an append-only log of game keys (sqlite/game-keys.ts). An
// index whose keys come at random has most of its pages rewritten by every import commit, so an import
// slows down as its database grows. The log holds, per database, 48 bits of each live game's hash, one row
// per run of consecutive pks; dedup_key stays empty in new rows. PostgreSQL keeps games_dedup_key (its WAL
// logs rows, not pages).
import { type Kysely, sql } from 'kysely';
import { keysBlob } from '../sqlite/game-keys.ts';
import type { Dialect } from '../types.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await { sqlite: gameKeys, postgres: async () => {} }[dialect](db);
}

async function gameKeys(db: Kysely<unknown>): Promise<void> {
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

// Migration 0005 on a SQLite store that already holds games (made by the migrations before it): the keys
// of its live games go into the game_keys log, per database and in runs of consecutive pks, the dedup index
// goes, and imports still skip the games it holds (and only those: not a deleted one).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { openStore } from '../../../src/store/index.ts';
import { migrationProvider } from '../../../src/store/migrations/index.ts';
import { record } from '../../helpers/dialects.ts';
import { queryStore } from '../../helpers/stores.ts';

const USER = 'u0000000-0000-4000-8000-000000000001';
const ONE = 'd0000000-0000-4000-8000-000000000001';
const TWO = 'd0000000-0000-4000-8000-000000000002';
const hash = (n: number) => n.toString(16).padStart(2, '0').repeat(32);

/** pk, database and liveness of the games of the old store: runs broken by the other database, a gap, a tombstone. */
const GAMES: [pk: number, database: string, deleted: number][] = [
  [1, ONE, 0],
  [2, ONE, 0],
  [3, TWO, 0],
  [4, ONE, 0],
  [5, ONE, 1],
  [6, ONE, 0],
  [9, ONE, 0],
  [10, ONE, 0],
];

async function storeAt0004(url: string): Promise<void> {
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(url) }) });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider('sqlite') }).migrateTo(
      '0004_dedup_key_column',
    );
    if (error) throw error;
    await sql`insert into users (id, login, created_at) values (${USER}, 'old', 1)`.execute(db);
    for (const [id, slug] of [
      [ONE, 'one'],
      [TWO, 'two'],
    ] as const) {
      await sql`insert into databases (id, owner_id, name, slug, created_at, updated_at)
        values (${id}, ${USER}, ${slug}, ${slug}, 1, 1)`.execute(db);
    }
    for (const [pk, database, deleted] of GAMES) {
      await sql`insert into games (pk, id, owner_id, database_id, slug, seq, result, metadata, moves, fen, pgn,
          content_hash, created_at, updated_at, deleted, dedup_key)
        values (${pk}, ${`g0000000-0000-7000-8000-0000000000${pk.toString().padStart(2, '0')}`}, ${USER},
          ${database}, ${`game-${pk}`}, ${pk}, '*', '{}', 'e2e4', 'fen', 'pgn', ${hash(pk)}, 1, 1, ${deleted},
          ${database.slice(0, 8) + hash(pk).slice(0, 12)})`.execute(db);
    }
  } finally {
    await db.destroy();
  }
}

test('migration 0005: the live games keys are logged in runs, the dedup index goes, imports skip them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-migrate-0005-'));
  const url = join(dir, 'store.sqlite');
  try {
    await storeAt0004(url);
    const store = await openStore(url);
    try {
      const log = await queryStore<{ database_id: string; first_pk: number; n: number }>(
        url,
        'select database_id, first_pk, length(keys) / 6 as n from game_keys order by id',
      );
      // Runs of one database's consecutive live pks: 1-2 | 4 | 6 | 9-10 of ONE (3 is TWO's, 5 deleted, 7-8 gone).
      assert.deepEqual(
        log
          .map((r) => [r.database_id, Number(r.first_pk), Number(r.n)])
          .sort((a, b) => (a[1] as number) - (b[1] as number)),
        [
          [ONE, 1, 2],
          [TWO, 3, 1],
          [ONE, 4, 1],
          [ONE, 6, 1],
          [ONE, 9, 2],
        ],
      );
      const indexes = await queryStore<{ name: string }>(
        url,
        "select name from sqlite_master where type = 'index'",
      );
      assert.ok(!indexes.some((i) => i.name === 'games_dedup_key'));
      const one = await store.databases.find(USER, 'one');
      assert.ok(one);
      const again = await store.games.insert(
        one,
        [1, 2, 3, 4, 5, 6, 9, 10].map((pk) => record(pk, { contentHash: hash(pk) })),
      );
      // Live games of ONE are duplicates; TWO's game (3) and the deleted one (5) are new here.
      assert.deepEqual([again.inserted, again.duplicates], [2, 6]);
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
});

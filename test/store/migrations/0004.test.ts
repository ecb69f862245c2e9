// Migration 0004 on a store that already holds games (made by the migrations before it): every game stays
// as it was, with its dedup key, and imports still skip the games it holds. On SQLite, where the games table
// is made anew, new games go on after the old pks, and a game whose database does not exist still cannot be
// written (its foreign key, now checked at commit, fails the commit).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { openStore } from '../../../src/store/index.ts';
import { migrationProvider } from '../../../src/store/migrations/index.ts';
import { DIALECTS, record } from '../../helpers/dialects.ts';
import { createTestDatabase, dropTestDatabase, queryStore } from '../../helpers/stores.ts';

const USER = 'u0000000-0000-4000-8000-000000000001';
const DATABASE = 'd0000000-0000-4000-8000-000000000001';
const HASHES = ['a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)];

/** A store at migration 0003 with one user, one database and three games, all live. */
async function storeAt0003(dialect: 'sqlite' | 'postgres', url: string): Promise<void> {
  const db = new Kysely<unknown>({
    dialect:
      dialect === 'postgres'
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) })
        : new SqliteDialect({ database: new SQLite(url) }),
  });
  try {
    const migrator = new Migrator({ db, provider: migrationProvider(dialect) });
    const { error } = await migrator.migrateTo('0003_dedup_prefix_index');
    if (error) throw error;
    await sql`insert into users (id, login, created_at) values (${USER}, 'old', 1)`.execute(db);
    await sql`insert into databases (id, owner_id, name, slug, created_at, updated_at)
      values (${DATABASE}, ${USER}, 'Old', 'old', 1, 1)`.execute(db);
    for (const [i, hash] of HASHES.entries()) {
      await sql`insert into games (pk, id, owner_id, database_id, slug, seq, result, metadata, moves, fen, pgn,
          content_hash, created_at, updated_at, deleted)
        values (${10 + i}, ${`g000000${i}-0000-7000-8000-000000000000`}, ${USER}, ${DATABASE}, ${`game-${i}`},
          ${i + 1}, '*', '{}', 'e2e4', 'fen', ${`[Result "*"]\n\n1. e4 *\n`}, ${hash}, 1, 1, 0)`.execute(db);
    }
    // SQLite: as if games after pk 12 had been written and were gone (a new pk must not reuse theirs).
    if (dialect === 'sqlite') await sql`update sqlite_sequence set seq = 20 where name = 'games'`.execute(db);
  } finally {
    await db.destroy();
  }
}

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0004 on ${dialect}`, { skip }, () => {
    test('games already in the store keep their rows, get their dedup key, and are still found', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chessport-migrate-0004-'));
      const url = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
      try {
        await storeAt0003(dialect, url);
        const store = await openStore(url);
        try {
          const rows = await queryStore<{ pk: number; id: string; dedup_key: string; pgn: string }>(
            url,
            'select pk, id, dedup_key, pgn from games order by pk',
          );
          assert.deepEqual(
            rows.map((r) => [Number(r.pk), r.dedup_key]),
            HASHES.map((hash, i) => [10 + i, `${DATABASE.slice(0, 8)}${hash.slice(0, 12)}`]),
          );
          assert.equal(rows[0]?.pgn, '[Result "*"]\n\n1. e4 *\n');
          const database = await store.databases.find(USER, 'old');
          assert.ok(database);
          const again = await store.games.insert(database, [
            record(1, { contentHash: HASHES[1] as string }),
            record(2, { contentHash: 'd'.repeat(64) }),
          ]);
          assert.deepEqual(
            { inserted: again.inserted, duplicates: again.duplicates },
            { inserted: 1, duplicates: 1 },
          );
          if (dialect === 'sqlite') {
            // The table was made anew: its AUTOINCREMENT goes on from the old one's.
            const [added] = await queryStore<{ pk: number }>(
              url,
              `select pk from games where id = '${again.ids[0]}'`,
            );
            assert.equal(Number(added?.pk), 21);
          }
        } finally {
          await store.close();
        }
        if (dialect === 'sqlite') {
          const raw = new SQLite(url);
          try {
            raw.pragma('foreign_keys = ON');
            raw.exec('begin');
            raw.exec(`insert into games (id, owner_id, database_id, slug, seq, result, metadata, moves, fen, pgn,
                content_hash, created_at, updated_at, dedup_key)
              values ('orphan', '${USER}', 'no-such-database', 's', 99, '*', '{}', '', 'fen', 'pgn', 'h', 1, 1, 'k')`);
            assert.throws(() => raw.exec('commit'), /FOREIGN KEY constraint failed/);
            raw.exec('rollback');
            assert.equal(raw.prepare("select count(*) from games where id = 'orphan'").pluck().get(), 0);
          } finally {
            raw.close();
          }
        }
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    });
  });
}

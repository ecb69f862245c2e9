// Several instances starting at once on a fresh store: each one migrates or waits for the one that does,
// all of them start, and every migration is applied exactly once. A store that a newer version has
// migrated is refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { BIN } from '../helpers/harness.ts';
import { createTestDatabase, dropTestDatabase, queryPostgres, queryStore } from '../helpers/stores.ts';
import { DIALECTS } from './dialects.ts';

const run = promisify(execFile);
const INSTANCES = 4;

for (const { dialect, skip } of DIALECTS) {
  describe(`migrations on ${dialect}`, { skip }, () => {
    test(`${INSTANCES} processes opening one fresh store at once all start; each migration runs once`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chessport-migrate-'));
      const url = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
      try {
        const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' };
        const outputs = await Promise.all(
          Array.from({ length: INSTANCES }, () =>
            run(process.execPath, [BIN, 'users', 'list', '--json'], { env, cwd: dir }),
          ),
        );
        for (const { stdout } of outputs) assert.deepEqual(JSON.parse(stdout), []);
        const applied = await queryStore<{ name: string }>(
          url,
          'select name from kysely_migration order by name',
        );
        assert.deepEqual(
          applied.map((m) => m.name),
          [
            '0001_initial',
            '0002_postgres_feed',
            '0003_dedup_prefix_index',
            '0004_dedup_key_column',
            '0005_sqlite_game_keys',
            '0006_export_result',
            '0007_database_games_seq',
          ],
        );
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    });

    test('a store that a newer version migrated is refused in one line by every command, serve too', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chessport-migrate-'));
      const url = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
      try {
        const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' };
        await run(process.execPath, [BIN, 'users', 'add', 'alice'], { env, cwd: dir });
        // What the next version's migration leaves behind.
        const record = "insert into kysely_migration (name, timestamp) values ('0099_next', '2030-01-01')";
        if (dialect === 'postgres') await queryPostgres(url, record);
        else {
          const db = new Database(url);
          db.exec(record);
          db.close();
        }
        // SQLite started on it, as every migration it knew was done; PostgreSQL called it "corrupted".
        for (const args of [
          ['users', 'list'],
          ['serve', '--port', '0'],
        ]) {
          const failed = await run(process.execPath, [BIN, ...args], { env, cwd: dir, timeout: 20_000 }).then(
            () => assert.fail(`chessport ${args[0]} ran on the newer store`),
            (error: { code?: number; stderr?: string }) => error,
          );
          assert.equal(failed.code, 1);
          assert.match(
            failed.stderr ?? '',
            /^chessport: cannot open the store: a newer version of chessport has upgraded it \(migration 0099_next, unknown to this one\)[^\n]*\n$/,
          );
        }
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    });
  });
}

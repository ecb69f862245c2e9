// Several instances starting at once on a fresh store: each one migrates or waits for the one that does,
// all of them start, and every migration is applied exactly once. A store that a newer version has
// migrated is refused.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { maskUrl } from '../../../src/cli/store-url.ts';
import { migrationProvider } from '../../../src/store/migrations/index.ts';
import { DIALECTS } from '../../helpers/dialects.ts';
import { BIN } from '../../helpers/harness.ts';
import { createTestDatabase, dropTestDatabase, queryPostgres, queryStore } from '../../helpers/stores.ts';

const run = promisify(execFile);
const INSTANCES = 4;

/** `chessport serve` until it listens, then SIGTERM: what it wrote, once it has exited 0. */
async function serveUntilListening(env: NodeJS.ProcessEnv, cwd: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { env, cwd });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  let stopping = false;
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    // Once: a second SIGTERM makes serve exit at once, with 1 (what a later chunk of its log would send).
    if (!stopping && output.includes('Server listening at')) {
      stopping = true;
      child.kill('SIGTERM');
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, output);
  return output;
}

/** A store as an older version left it: migrated up to `last`, with a user. */
async function olderStore(dialect: 'sqlite' | 'postgres', url: string, last: string): Promise<void> {
  const db = new Kysely<unknown>({
    dialect:
      dialect === 'postgres'
        ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) })
        : new SqliteDialect({ database: new Database(url) }),
  });
  try {
    const { error } = await new Migrator({ db, provider: migrationProvider(dialect) }).migrateTo(last);
    if (error) throw error;
    await db
      .insertInto('users' as never)
      .values({ id: 'u0000000-0000-4000-8000-000000000001', login: 'old', created_at: 1 } as never)
      .execute();
  } finally {
    await db.destroy();
  }
}

/** Every migration after 0005, in order: what a store made by a 0005-era version takes on upgrade. */
const AFTER_0005 = [
  '0006_export_result',
  '0007_database_games_seq',
  '0008_escape_lines_and_halfmove_clock',
  '0009_oauth',
  '0010_webhooks',
  '0011_database_game_count',
  '0012_oauth_record_user',
  '0013_developer_console',
  '0014_webhook_events',
  '0015_game_filter_indexes',
  '0016_games_changed_index',
];

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
            ...AFTER_0005,
          ],
        );
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    });

    test('a store that an older version made is upgraded, and the operator is told so, once', async () => {
      // Migrations ran in silence: the first start of a new version may take minutes (0004 rebuilds the
      // games table), after which no older version opens the store, and nothing said it had happened.
      const dir = mkdtempSync(join(tmpdir(), 'chessport-migrate-'));
      const urls =
        dialect === 'postgres'
          ? [await createTestDatabase(), await createTestDatabase()]
          : [join(dir, 'cli.sqlite'), join(dir, 'serve.sqlite')];
      const [cliUrl = '', serveUrl = ''] = urls;
      try {
        for (const url of urls) await olderStore(dialect, url, '0005_sqlite_game_keys');
        const env = { ...process.env, DATABASE_URL: cliUrl, LOG_LEVEL: 'warn' };
        const first = await run(process.execPath, [BIN, 'users', 'list', '--json'], { env, cwd: dir });
        assert.deepEqual(
          (JSON.parse(first.stdout) as { login: string }[]).map((u) => u.login),
          ['old'],
          'stdout is the one JSON document, the data kept',
        );
        assert.equal(
          first.stderr,
          `chessport: upgraded the store ${cliUrl} to this version (migrations ${AFTER_0005.join(', ')})\n`,
        );
        const again = await run(process.execPath, [BIN, 'users', 'list', '--json'], { env, cwd: dir });
        assert.equal(again.stderr, '', 'an up-to-date store opens without a word');

        // The test server takes any password (trust), so a URL with one shows that the log masks it.
        const withPassword = (url: string) =>
          url.replace('postgres://postgres@', 'postgres://postgres:s3cret@');
        const serveLog = async () => {
          // A SQLite file named relative to the working folder is logged by its full path.
          const url = dialect === 'sqlite' ? 'serve.sqlite' : withPassword(serveUrl);
          const env = { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info' };
          const output = await serveUntilListening(env, dir);
          assert.ok(!output.includes('s3cret'), output);
          const lines = output
            .split('\n')
            .filter(Boolean)
            .map((line) => JSON.parse(line) as { msg: string; store?: string });
          assert.match(lines[1]?.msg ?? '', /^Server listening at /, 'the store line comes first');
          return lines[0];
        };
        const store = serveUrl.replace('postgres://postgres@', 'postgres://postgres:***@');
        const upgraded = await serveLog();
        assert.deepEqual(upgraded, {
          ...upgraded,
          msg: `upgraded the store: applied migrations ${AFTER_0005.join(', ')}`,
          store,
          dialect,
          migrations: AFTER_0005,
          secretFrom: 'store',
          redis: null,
        });
        const opened = await serveLog();
        assert.deepEqual(opened, { ...opened, msg: 'opened the store', store, dialect });
        assert.ok(opened && !('migrations' in opened));
      } finally {
        if (dialect === 'postgres') for (const url of urls) await dropTestDatabase(url);
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
          // The store named as other failures to open it name it (its password masked), and how to tell
          // which version this is.
          const named = dialect === 'postgres' ? maskUrl(url) : url;
          assert.equal(
            failed.stderr,
            `chessport: cannot open the store ${named}: a newer version of chessport has upgraded it (migration 0099_next, unknown to this one): run that version or a later one (\`chessport --version\` says which one this is)\n`,
          );
        }
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
      }
    });
  });
}

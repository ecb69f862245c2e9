// The stores of the tests: which dialect this run uses, a fresh PostgreSQL database per store, and a look
// inside a store for the few tests that check what it holds at rest.
// `npm test` runs the store-using suites once on SQLite, then once more with CHESSPORT_TEST_STORE=postgres
// (scripts/test-postgres.sh) when TEST_POSTGRES_URL names a server where we may create databases.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

export type TestDialect = 'sqlite' | 'postgres';

/** An administrative connection URL (any database on the server; new databases are made beside it). */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL || null;

/** The dialect of the stores that tempEnv() makes in this run. */
export const STORE_DIALECT: TestDialect =
  process.env.CHESSPORT_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

if (STORE_DIALECT === 'postgres' && !TEST_POSTGRES_URL) {
  throw new Error(
    'CHESSPORT_TEST_STORE=postgres needs TEST_POSTGRES_URL (e.g. postgres://postgres@127.0.0.1/test)',
  );
}

export const POSTGRES_SKIP = 'TEST_POSTGRES_URL is not set: the PostgreSQL runs are skipped';

const ROOT = resolve(import.meta.dirname, '../..');
const PREFIX = 'chessport_t_';

function adminUrl(): string {
  if (!TEST_POSTGRES_URL) throw new Error(POSTGRES_SKIP);
  return TEST_POSTGRES_URL;
}

/** The URL of database `name` on the test server. */
function urlOf(name: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

// tempEnv() is synchronous (every suite calls it so), and pg is not: the statement runs in a short-lived
// child process (about 0.2 s).
const RUN_SQL = `
import pg from 'pg';
const client = new pg.Client(process.argv[1]);
await client.connect();
try { await client.query(process.argv[2]); } finally { await client.end(); }
`;

function adminSync(statement: string): void {
  execFileSync(process.execPath, ['--input-type=module', '-e', RUN_SQL, adminUrl(), statement], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

function freshName(): string {
  return `${PREFIX}${randomBytes(6).toString('hex')}`;
}

// Test databases sort text like a typical production database (ICU en-US: "alice" < "Zed"), not like the
// test server's default "C" locale, so that a query relying on the default collation fails in the tests.
// Servers built without ICU make plain databases.
const ICU = `template template0 locale_provider icu icu_locale 'en-US'`;
const createStatements = (name: string) => [`create database ${name} ${ICU}`, `create database ${name}`];

/** Creates an empty database and returns its URL. */
export function createTestDatabaseSync(): string {
  const name = freshName();
  const [icu, plain] = createStatements(name) as [string, string];
  try {
    adminSync(icu);
  } catch {
    adminSync(plain);
  }
  return urlOf(name);
}

/** Drops a database made by createTestDatabase*, closing any connection still open to it. */
export function dropTestDatabaseSync(url: string): void {
  adminSync(`drop database if exists ${testDatabaseName(url)} with (force)`);
}

/** Creates an empty database and returns its URL; `encoding` makes one in that encoding (and locale C). */
export async function createTestDatabase(options: { encoding?: string } = {}): Promise<string> {
  const name = freshName();
  if (options.encoding) {
    await admin(`create database ${name} template template0 encoding '${options.encoding}' locale 'C'`);
    return urlOf(name);
  }
  const [icu, plain] = createStatements(name) as [string, string];
  await admin(icu).catch(() => admin(plain));
  return urlOf(name);
}

export async function dropTestDatabase(url: string): Promise<void> {
  await admin(`drop database if exists ${testDatabaseName(url)} with (force)`);
}

function testDatabaseName(url: string): string {
  const name = new URL(url).pathname.slice(1);
  // Only ever drop what the tests made.
  if (!/^chessport_t_[0-9a-f]{12}$/.test(name)) throw new Error(`not a test database: ${name}`);
  return name;
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client(adminUrl());
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Runs one query on a test database and returns its rows. */
export async function queryPostgres<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * Runs one read-only query on a test store of either dialect. Write it in the SQL both speak, and cast
 * counts (`count(*)` is a bigint that pg returns as a string): `cast(count(*) as integer)`.
 */
export async function queryStore<T>(databaseUrl: string, text: string): Promise<T[]> {
  if (/^postgres(ql)?:/.test(databaseUrl)) return queryPostgres<T>(databaseUrl, text);
  const db = new Database(databaseUrl, { readonly: true });
  try {
    return db.prepare(text).all() as T[];
  } finally {
    db.close();
  }
}

/** Runs statements on a test store of either dialect, outside it (a test undoes a migration's record with it). */
export async function executeOnStore(databaseUrl: string, text: string): Promise<void> {
  if (/^postgres(ql)?:/.test(databaseUrl)) {
    await queryPostgres(databaseUrl, text);
    return;
  }
  const db = new Database(databaseUrl);
  try {
    db.exec(text);
  } finally {
    db.close();
  }
}

/**
 * What each migration after 0006 changed in the schema, as the statements that take it back. Keep it whole:
 * a migration test rewinds a store to before the migration it tests, and every later one runs again.
 */
const UNDO: Record<string, string[]> = {
  '0007_database_games_seq': ['alter table databases drop column games_seq'],
  '0009_oauth': [
    'drop table oauth_records',
    'drop table grants',
    'drop index tokens_grant',
    'alter table tokens drop column grant_id',
    'alter table users drop column password_hash',
    'alter table apps drop column client_type',
    'alter table apps drop column redirect_uris',
    'alter table apps drop column device_flow',
    'alter table apps drop column client_secret_hash',
  ],
  '0010_webhooks': [
    'drop table webhook_deliveries',
    'drop table webhook_signals',
    'drop table webhook_endpoints',
    'drop index tokens_user_app',
  ],
  '0011_database_game_count': ['alter table databases drop column game_count'],
  '0012_oauth_record_user': [
    'drop index oauth_records_user',
    'alter table oauth_records drop column user_id',
  ],
  '0015_game_filter_indexes': [
    'drop index games_owner_white_name',
    'drop index games_owner_black_name',
    'drop index games_owner_white_fide_id',
    'drop index games_owner_black_fide_id',
    'drop index games_owner_date',
    'drop index games_owner_eco',
    'drop index games_owner_event',
    'drop index games_owner_result',
  ],
};

/**
 * The store as it was before the migration `from` (a name prefix such as '0006'): the later migrations are
 * undone, newest first, and forgotten, so the store runs them again when it is next opened.
 */
export async function rewindStore(databaseUrl: string, from: string): Promise<void> {
  await executeOnStore(databaseUrl, `delete from kysely_migration where name >= '${from}'`);
  for (const name of Object.keys(UNDO).sort().reverse()) {
    if (name < from) continue;
    for (const statement of UNDO[name] ?? []) await executeOnStore(databaseUrl, statement);
  }
}

/**
 * Everything a store keeps at rest, as text: the SQLite file and its WAL byte for byte (free pages
 * included), or every row of every table of the PostgreSQL database.
 */
export async function storeText(databaseUrl: string): Promise<string> {
  if (/^postgres(ql)?:/.test(databaseUrl)) {
    const tables = await queryPostgres<{ name: string }>(
      databaseUrl,
      "select tablename as name from pg_tables where schemaname = 'public'",
    );
    const parts: string[] = [];
    for (const { name } of tables) {
      const rows = await queryPostgres<{ row: string }>(
        databaseUrl,
        `select t::text as row from "${name}" t`,
      );
      parts.push(...rows.map((r) => r.row));
    }
    return parts.join('\n');
  }
  const wal = `${databaseUrl}-wal`;
  return [databaseUrl, wal]
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file).toString('latin1'))
    .join('\n');
}

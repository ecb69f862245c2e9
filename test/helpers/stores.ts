// The stores of the tests: which dialect this run uses, a fresh PostgreSQL database per store, and a look
// inside a store for the few tests that check what it holds at rest.
// `npm test` runs the store-using suites once on SQLite and once more with CHESSPORT_TEST_STORE=postgres
// (scripts/run-tests.ts, the two passes side by side) when TEST_POSTGRES_URL names a server where we may create databases.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { adminSync } from './postgres-admin-sync.ts';

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

/**
 * A PgBouncer in transaction mode in front of TEST_POSTGRES_URL's server (TEST_PGBOUNCER_URL, started by
 * scripts/run-tests.ts with test/helpers/pgbouncer.ts): where set, the PostgreSQL stores that tempEnv()
 * makes are reached through it, by the servers and the CLI alike, with their LISTEN connection direct.
 */
export const TEST_PGBOUNCER_URL = process.env.TEST_PGBOUNCER_URL || null;

/**
 * The settings that reach the test database at `databaseUrl`: through TEST_PGBOUNCER_URL's pooler where set
 * (DATABASE_URL pooled, PG_POOL_MODE=transaction, DATABASE_LISTEN_URL direct), else directly.
 */
export function storeEnv(databaseUrl: string): NodeJS.ProcessEnv {
  if (!TEST_PGBOUNCER_URL || !/^postgres(ql)?:/.test(databaseUrl)) return { DATABASE_URL: databaseUrl };
  const pooled = new URL(databaseUrl);
  pooled.host = new URL(TEST_PGBOUNCER_URL).host;
  return {
    DATABASE_URL: pooled.toString(),
    DATABASE_LISTEN_URL: databaseUrl,
    PG_POOL_MODE: 'transaction',
  };
}

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

// A drop that the test does not wait for runs in a child process of its own (dropTestDatabaseLater).
const RUN_SQL = `
import pg from 'pg';
const client = new pg.Client(process.argv[1]);
await client.connect();
try { await client.query(process.argv[2]); } finally { await client.end(); }
`;

function statementSync(statement: string): void {
  adminSync({ kind: 'statement', admin: adminUrl(), statement });
}

function freshName(): string {
  return `${PREFIX}${randomBytes(6).toString('hex')}`;
}

// Test databases sort text like a typical production database (ICU en-US: "alice" < "Zed"), not like the
// test server's default "C" locale, so that a query relying on the default collation fails in the tests.
// Servers built without ICU make plain databases.
const ICU = `template template0 locale_provider icu icu_locale 'en-US'`;
const createStatements = (name: string) => [`create database ${name} ${ICU}`, `create database ${name}`];

// A migrated store is a copy of a template database that this checkout's migrations were applied to once
// (CREATE DATABASE ... TEMPLATE: a file copy, where migrating each new store costs a second or more). Its
// name carries a hash of the store's sources, so that checkouts with other migrations that share the server
// (and a later change to them) each get their own. The first test to need it builds it under a name of its own
// and renames it; when another one won that race, it drops its own. No one connects to the template after it
// is built: PostgreSQL copies a database only while no session is on it.
const TEMPLATE_PREFIX = 'chessport_tpl_';
let templateName: string | null = null;

function migratedTemplate(): string {
  if (templateName) return templateName;
  const hash = createHash('sha256');
  const storeSources = resolve(ROOT, 'src/store');
  for (const file of readdirSync(storeSources, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!file.endsWith('.ts')) continue;
    hash.update(file).update(readFileSync(resolve(storeSources, file)));
  }
  templateName = `${TEMPLATE_PREFIX}${hash.digest('hex').slice(0, 16)}`;
  return templateName;
}

/** Creates a database with this checkout's migrations applied (a copy of the template) and returns its URL. */
export function createMigratedTestDatabaseSync(): string {
  const name = freshName();
  const building = freshName();
  const [icu, plain] = createStatements(building) as [string, string];
  const storeModule = pathToFileURL(resolve(ROOT, 'src/store/index.ts')).href;
  adminSync({
    kind: 'copy',
    admin: adminUrl(),
    template: migratedTemplate(),
    name,
    building,
    icu,
    plain,
    storeModule,
  });
  return urlOf(name);
}

/** Creates an empty database and returns its URL. */
export function createTestDatabaseSync(): string {
  const name = freshName();
  const [icu, plain] = createStatements(name) as [string, string];
  try {
    statementSync(icu);
  } catch {
    statementSync(plain);
  }
  return urlOf(name);
}

/** Drops a database made by createTestDatabase*, closing any connection still open to it. */
export function dropTestDatabaseSync(url: string): void {
  statementSync(`drop database if exists ${testDatabaseName(url)} with (force)`);
}

/**
 * Drops a database made by createTestDatabase*, as dropTestDatabaseSync, in a child process that the test does
 * not wait for (a drop takes a second or more, a checkpoint of the server's): the test's cleanup goes on at
 * once, and the test's process may end before the drop does.
 */
export function dropTestDatabaseLater(url: string): void {
  const statement = `drop database if exists ${testDatabaseName(url)} with (force)`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', RUN_SQL, adminUrl(), statement], {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
  });
  child.unref();
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
  '0013_developer_console': [
    'drop index apps_owner',
    'drop index apps_personal_for',
    'alter table users drop column developer',
    'alter table apps drop column owner_id',
    'alter table apps drop column homepage',
    'alter table apps drop column description',
    'alter table apps drop column previous_secret_hash',
    'alter table apps drop column previous_secret_until',
    'alter table apps drop column deleted_at',
    'alter table apps drop column personal_for',
    'alter table tokens drop column description',
    'alter table tokens drop column last_used_at',
  ],
  '0014_webhook_events': [
    'drop index webhook_deliveries_pending',
    "create unique index webhook_deliveries_pending on webhook_deliveries (endpoint_id, user_id) where status = 'pending'",
    'alter table webhook_deliveries drop column last_latency_ms',
    'alter table webhook_deliveries drop column event_type',
    'alter table webhook_endpoints drop column events',
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
  '0016_games_changed_index': ['drop index games_owner_changed'],
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

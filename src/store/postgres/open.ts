// Opens a PostgreSQL store: a pool whose connections can be dropped when silent and take settings later, on a
// database that can hold every text; its adapter, its migrations, and the LISTEN connection that hears other
// processes' commits.
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { PoolClient } from 'pg';
import type { OpenedStore, OpenSettings } from '../adapter.ts';
import { ChangeSignals } from '../change-signals.ts';
import { MigrationFailure } from '../errors.ts';
import { migrate } from '../migrations/run.ts';
import { kyselyRunner } from '../prepared.ts';
import type { DB } from '../schema.ts';
import { PostgresAdapter, type Sessions } from './adapter.ts';
import { PostgresChangeListener } from './change-listener.ts';
import { PoolSockets } from './sockets.ts';

/** How long a query waits for a PostgreSQL connection (a free one in the pool, or a new one) before failing. */
const CONNECT_TIMEOUT_MS = 5000;

/** The store at `url` (a postgres:// URL), its pending migrations applied unless told not to. */
export async function openPostgres(url: string, settings: OpenSettings): Promise<OpenedStore> {
  const { db, sessions, sockets, ownConnection } = await openPool(url, settings.poolMax);
  await checkEncoding(db).catch(async (error: unknown) => {
    await db.destroy();
    throw error;
  });
  const adapter = new PostgresAdapter(sessions, sockets, ownConnection);
  const applied = settings.migrate ? await migrate(db, adapter) : [];
  // A lock held by another session (an operator's open transaction, a stuck client) would keep a statement
  // waiting, saying nothing, for as long as that session lives (`chessport games delete` on a row locked in
  // psql): it fails after the timeout instead (SQLSTATE 55P03), as on SQLite (busy_timeout).
  sessions.set('lock_timeout', settings.lockTimeoutMs);
  const signals: ChangeSignals = new ChangeSignals(
    new PostgresChangeListener(url, (event) => signals.onSourceEvent(event)),
  );
  return { db, adapter, reader: kyselyRunner(db), signals, applied };
}

// int8 (bigint, count(*), row_number()) arrives from pg as a string by default, because it can exceed
// 2^53. Every int8 of this store is a millisecond time, a change sequence value, a row count or a pk, all
// far below 2^53 (9e15: 285,000 years of milliseconds), so they are parsed to plain numbers, like SQLite's.
const INT8_OID = 20;
const parseInt8 = (text: string) => Number(text);

/**
 * A pool of at most poolMax connections to the database at `url`, its sessions (to set their timeouts
 * later) and its sockets (to drop the silent ones: sockets.ts).
 */
async function openPool(
  url: string,
  poolMax: number,
): Promise<{ db: Kysely<DB>; sessions: Sessions; sockets: PoolSockets; ownConnection: () => Kysely<DB> }> {
  // Loaded only here: a command on a SQLite store starts sooner without it.
  const { default: pg } = await import('pg');
  const types = {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8_OID && format !== 'binary'
        ? parseInt8
        : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  };
  const sockets = new PoolSockets();
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // TCP keepalive on each connection, so that one to a host that vanished is found dead and dropped.
    keepAlive: true,
    stream: sockets.create,
    types,
  });
  // A connection that the server or the network drops (restart, failover) emits 'error': on the pool while
  // idle, on the client itself while checked out between two queries. Unhandled, either would end the
  // process. The pool discards a broken connection (when idle, or when it comes back), and the next query
  // opens a new one or fails with an error that the API answers with 503.
  pool.on('error', () => undefined);
  const clients = new Set<PoolClient>();
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
    clients.add(client);
    client.once('end', () => clients.delete(client));
  });
  const sessions: Sessions = {
    set(name, ms) {
      const value = Math.round(ms);
      pool.options[name] = value; // a start-up parameter of the connections to come
      // Those open now are idle (set while nothing else runs): the SET goes before their next query.
      for (const client of clients) client.query(`set ${name} = ${value}`).catch(() => undefined);
    },
  };
  // A snapshot's connection (PostgresAdapter.openSnapshot): a pool of one, with the settings the pool's
  // connections get now (timeouts included), ended with its snapshot.
  const ownConnection = () => {
    const own = new pg.Pool({ ...pool.options, max: 1 });
    own.on('error', () => undefined);
    own.on('connect', (client) => client.on('error', () => undefined));
    return new Kysely<DB>({ dialect: new PostgresDialect({ pool: own }) });
  };
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }) }), sessions, sockets, ownConnection };
}

/**
 * PostgreSQL: a database whose encoding cannot hold every character is refused before anything is written.
 * SQLite stores any text, and so must PostgreSQL: in a LATIN1 database `users add Émile` works, but `李`
 * fails ("has no equivalent in encoding LATIN1"), and an import stops part-way at the first game with such
 * a name. SQL_ASCII stores the bytes it is sent (the driver's UTF-8) unchanged, so it holds them too.
 */
async function checkEncoding(db: Kysely<DB>): Promise<void> {
  const { rows } = await sql<{ server_encoding: string }>`show server_encoding`.execute(db);
  const encoding = rows[0]?.server_encoding ?? '';
  if (encoding === 'UTF8' || encoding === 'SQL_ASCII') return;
  throw new MigrationFailure(
    `its database has the encoding ${encoding}, which cannot hold every text a PGN file may bring (player ` +
      'names in any script): use a UTF8 database (createdb -E UTF8 -T template0 <name>; pg_dump and ' +
      'pg_restore move an existing one into it)',
  );
}

// Which errors are the store failing (full, locked, unreachable) rather than a bug or a refusal of its own.
// One list for both readers: the API answers them 503 unavailable (retry later), the CLI says what to do.

/** What went wrong with the store, in the terms an operator acts on. */
export type StoreFault =
  | 'full'
  | 'locked'
  | 'read-only'
  /** SQLite: the file could not be opened (a missing or read-only folder, a path that is a folder). */
  | 'cannot-open'
  | 'io'
  | 'connection'
  | 'cancelled'
  /** The store was closed under the request (during shutdown a request can still be on its way). */
  | 'closed';

// SQLite result codes: better-sqlite3 puts the extended name in `code`, e.g. SQLITE_BUSY_RECOVERY.
const SQLITE: [RegExp, StoreFault][] = [
  [/^SQLITE_FULL/, 'full'],
  [/^SQLITE_(BUSY|LOCKED)/, 'locked'],
  [/^SQLITE_READONLY/, 'read-only'],
  [/^SQLITE_CANTOPEN/, 'cannot-open'],
  [/^SQLITE_(IOERR|PROTOCOL|NOLFS)/, 'io'],
];

// Network failures of a store behind a socket (the PostgreSQL dialect).
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

// PostgreSQL SQLSTATEs: 53100 disk full; 55P03 a lock held by another session past the lock timeout (a table
// locked by a migration or VACUUM FULL); 25006 a read-only transaction, as on a replica promoted away from
// under us; 08 connection exception, 53 other insufficient resources (out of memory, too many connections),
// 57P01-57P03 admin shutdown, crash shutdown, cannot connect now (starting up or in recovery); 57014 a
// statement cancelled (by an operator or a timeout), 40001 and 40P01 a serialization failure or deadlock.
const POSTGRES: [RegExp, StoreFault][] = [
  [/^53100$/, 'full'],
  [/^55P03$/, 'locked'],
  [/^25006$/, 'read-only'],
  [/^(08...|53...|57P0[1-3])$/, 'connection'],
  [/^(57014|40001|40P01)$/, 'cancelled'],
];

// Messages of node-postgres errors that carry no code: the server went away mid-query, a connection
// attempt or the wait for a free pooled connection timed out, or a connection already broke.
const POSTGRES_CLIENT =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

// Kysely, after the store was closed.
const CLOSED = /driver has already been destroyed|database connection is not open|pool after calling end/i;

/** The store's failure behind an error, or undefined when the error is no such failure. */
export function storeFault(error: unknown): StoreFault | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    for (const [pattern, fault] of code.startsWith('SQLITE_') ? SQLITE : POSTGRES)
      if (pattern.test(code)) return fault;
    if (NETWORK.has(code)) return 'connection';
  }
  if (POSTGRES_CLIENT.test(error.message)) return 'connection';
  if (CLOSED.test(error.message)) return 'closed';
  return undefined;
}

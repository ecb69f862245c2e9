// Which failures mean "the store cannot answer right now" (503 unavailable, retry later) rather than a bug.

// SQLite result codes (better-sqlite3 puts the extended name in `code`, e.g. SQLITE_BUSY_RECOVERY):
// another process holds a lock past the busy timeout, the file cannot be opened or read, the disk is full.
const SQLITE_TRANSIENT = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|PROTOCOL|NOLFS|READONLY)(_|$)/;

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
// PostgreSQL SQLSTATEs: 08 connection exception; 53 insufficient resources (disk full, out of memory, too
// many connections); 57P01-57P03 admin shutdown, crash shutdown, cannot connect now (starting up or in
// recovery); 57014 a statement cancelled (by an operator or a timeout); 55P03 a lock held by another session
// past the lock timeout (a table locked by a migration or VACUUM FULL); 25006 a read-only transaction, as on
// a replica promoted away from under us.
const POSTGRES_UNAVAILABLE = /^(08...|53...|57P0[1-3]|57014|55P03|25006)$/;

// Messages of node-postgres errors that carry no code: the server went away mid-query, a connection
// attempt or the wait for a free pooled connection timed out, or a connection already broke.
const POSTGRES_CLIENT =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/;

// Kysely, after the store was closed (during shutdown a request can still be on its way).
const CLOSED = /driver has already been destroyed|database connection is not open|pool after calling end/i;

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SQLITE_TRANSIENT.test(code) || NETWORK.has(code) || POSTGRES_UNAVAILABLE.test(code)) return true;
  }
  return POSTGRES_CLIENT.test(error.message) || CLOSED.test(error.message);
}

// Which failures mean "the store cannot answer right now" (503 unavailable, retry later) rather than a bug.

// SQLite result codes (better-sqlite3 puts the extended name in `code`, e.g. SQLITE_BUSY_RECOVERY):
// another process holds a lock past the busy timeout, the file cannot be opened or read, the disk is full.
const SQLITE_TRANSIENT = /^SQLITE_(BUSY|LOCKED|CANTOPEN|IOERR|FULL|PROTOCOL|NOLFS|READONLY)(_|$)/;

// Network failures of a store behind a socket (the PostgreSQL dialect) and PostgreSQL's own
// "cannot connect now", "admin shutdown" and "too many connections" classes.
const NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);
const POSTGRES_UNAVAILABLE = /^(08...|57P0[1-3]|53300)$/;

// Kysely, after the store was closed (during shutdown a request can still be on its way).
const CLOSED = /driver has already been destroyed|database connection is not open/i;

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SQLITE_TRANSIENT.test(code) || NETWORK.has(code) || POSTGRES_UNAVAILABLE.test(code)) return true;
  }
  return CLOSED.test(error.message);
}

// A store that fails under a command (a full disk, a lock held too long, a lost connection) is said in words
// the operator can act on, naming the store, with the driver's own message in parentheses. The driver's
// message alone ("database or disk is full", "terminating connection due to administrator command") named
// neither the store nor what to do, and came with the hint for bugs (CHESSPORT_DEBUG=1).
import { DEFAULT_LOCK_TIMEOUT_MS } from '../store/index.ts';
import { maskUrl } from './store-url.ts';

export interface StoreFailure {
  /** What happened, naming the store: `the store data/x.sqlite is full (database or disk is full)`. */
  what: string;
  /** What to do about it: `free space on its disk, then run the command again`. */
  remedy: string;
}

const AGAIN = 'run the command again';
const waited = `${DEFAULT_LOCK_TIMEOUT_MS / 1000} s`;

/**
 * What a failure of the store means for the operator, or undefined when the error is no such failure (a bug,
 * a refusal of the store's own, like a duplicate login).
 */
export function storeFailure(error: unknown, storeUrl: string): StoreFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const store = `the store ${maskUrl(storeUrl)}`;
  const raw = (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  const cause = `(${error.message})`;
  // SQLite: better-sqlite3 puts the extended result code in `code` (SQLITE_IOERR_WRITE).
  if (/^SQLITE_FULL/.test(code)) {
    return { what: `${store} is full ${cause}`, remedy: `free space on its disk, then ${AGAIN}` };
  }
  if (/^SQLITE_(BUSY|LOCKED)/.test(code)) {
    return {
      what: `another process held ${store} locked for more than ${waited} ${cause}`,
      remedy: `${AGAIN} when it is done`,
    };
  }
  if (/^SQLITE_READONLY/.test(code)) {
    return {
      what: `${store} is read-only here ${cause}`,
      remedy: `make it and its folder writable for this user, then ${AGAIN}`,
    };
  }
  if (/^SQLITE_IOERR/.test(code)) {
    return {
      what: `${store} could not be written or read ${cause}`,
      remedy: `check its disk (full? gone? a file size limit?), then ${AGAIN}`,
    };
  }
  // PostgreSQL: SQLSTATE in `code`; network errors of the connection; node-postgres's own, without a code.
  if (code === '55P03') {
    return {
      what: `another session held a lock in ${store} for more than ${waited} ${cause}`,
      remedy: `${AGAIN} when it is done (pg_locks shows who holds it)`,
    };
  }
  if (code === '53100') {
    return { what: `${store} is full ${cause}`, remedy: `free space on its server's disk, then ${AGAIN}` };
  }
  if (code === '25006') {
    return {
      what: `${store} is read-only ${cause}`,
      remedy: `point DATABASE_URL at the primary, then ${AGAIN}`,
    };
  }
  if (
    /^(08...|57P0[1-3]|53...)$/.test(code) ||
    /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/.test(code) ||
    /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error)/.test(
      error.message,
    )
  ) {
    return { what: `the connection to ${store} failed ${cause}`, remedy: `${AGAIN} once it answers` };
  }
  if (code === '57014' || code === '40001' || code === '40P01') {
    return { what: `${store} cancelled a statement of the command ${cause}`, remedy: AGAIN };
  }
  return undefined;
}

/** The failure in one line, for a command other than an import: what happened, then what to do. */
export function storeFailureLine(failure: StoreFailure): string {
  return `${failure.what}: ${failure.remedy}`;
}

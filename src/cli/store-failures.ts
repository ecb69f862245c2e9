// A store that fails under a command (a full disk, a lock held too long, a lost connection) is said in words
// the operator can act on, naming the store, with the driver's own message in parentheses. The driver's
// message alone ("database or disk is full", "terminating connection due to administrator command") named
// neither the store nor what to do, and came with the hint for bugs (CHESSPORT_DEBUG=1).
import { DEFAULT_LOCK_TIMEOUT_MS, isPostgresUrl, storeFault } from '../store/index.ts';
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
 * a refusal of the store's own, like a duplicate login) or one said elsewhere (a store that cannot be opened,
 * which openCliStore explains).
 */
export function storeFailure(error: unknown, storeUrl: string): StoreFailure | undefined {
  const fault = storeFault(error);
  if (fault === undefined || fault === 'cannot-open' || fault === 'closed') return undefined;
  const store = `the store ${maskUrl(storeUrl)}`;
  const cause = `(${(error as Error).message})`;
  const postgres = isPostgresUrl(storeUrl);
  switch (fault) {
    case 'full':
      return {
        what: `${store} is full ${cause}`,
        remedy: `free space on ${postgres ? "its server's disk" : 'its disk'}, then ${AGAIN}`,
      };
    case 'locked':
      return postgres
        ? {
            what: `another session held a lock in ${store} for more than ${waited} ${cause}`,
            remedy: `${AGAIN} when it is done (pg_locks shows who holds it)`,
          }
        : {
            what: `another process held ${store} locked for more than ${waited} ${cause}`,
            remedy: `${AGAIN} when it is done`,
          };
    case 'read-only':
      return postgres
        ? {
            what: `${store} is read-only ${cause}`,
            remedy: `point DATABASE_URL at the primary, then ${AGAIN}`,
          }
        : {
            what: `${store} is read-only here ${cause}`,
            remedy: `make it and its folder writable for this user, then ${AGAIN}`,
          };
    case 'io':
      return {
        what: `${store} could not be written or read ${cause}`,
        remedy: `check its disk (full? gone? a file size limit?), then ${AGAIN}`,
      };
    case 'connection':
      return { what: `the connection to ${store} failed ${cause}`, remedy: `${AGAIN} once it answers` };
    case 'cancelled':
      return { what: `${store} cancelled a statement of the command ${cause}`, remedy: AGAIN };
  }
}

/** The failure in one line, for a command other than an import: what happened, then what to do. */
export function storeFailureLine(failure: StoreFailure): string {
  return `${failure.what}: ${failure.remedy}`;
}

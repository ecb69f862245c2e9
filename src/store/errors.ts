// The store's own refusals: a message for the operator or the client, not a bug.
export class StoreError extends Error {}

/**
 * For an insert after a lookup found nothing: another process may insert the same name in between, and the
 * unique index refuses ours. That is the lookup's "already exists", not a raw constraint error.
 */
export function alreadyExists(message: string): (error: unknown) => never {
  return (error) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505') throw new StoreError(message);
    throw error;
  };
}

/**
 * The store could not be brought to this version's schema (or a newer version has upgraded it). `reason` does
 * not name the store: the CLI names it as it shows it, its password masked.
 */
export class MigrationFailure extends StoreError {
  readonly reason: string;

  constructor(reason: string) {
    super(`cannot open the store: ${reason}`);
    this.reason = reason;
  }
}

// 0012: a row of oauth_records that signs a user in names the user (user_id), so that a change of the user's
// password ends their sessions in the same transaction (accounts.ts). Filled here for the sign-ins already
// kept: the server's own sessions ('WebSession', their payload's userId), oidc-provider's sessions
// ('Session', its accountId) and interactions ('Interaction', the account they signed in or began with).
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';

/** The value at `path` in parsed JSON, or undefined. */
function field(json: unknown, ...path: string[]): unknown {
  let at = json;
  for (const key of path) {
    at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

/** The user a row of this migration's day signs in, from its model and payload. */
function signedIn(model: string, payload: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  const ids =
    model === 'WebSession'
      ? [field(parsed, 'userId')]
      : model === 'Session'
        ? [field(parsed, 'accountId')]
        : [
            field(parsed, 'result', 'login', 'accountId'),
            field(parsed, 'lastSubmission', 'login', 'accountId'),
            field(parsed, 'session', 'accountId'),
          ];
  return ids.find((id): id is string => typeof id === 'string') ?? null;
}

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  await db.schema.alterTable('oauth_records').addColumn('user_id', 'text').execute();
  await db.schema.createIndex('oauth_records_user').on('oauth_records').column('user_id').execute();
  const { rows } = await sql<{ model: string; id: string; payload: string }>`
    select model, id, payload from oauth_records where model in ('WebSession', 'Session', 'Interaction')
  `.execute(db);
  for (const row of rows) {
    const userId = signedIn(row.model, row.payload);
    if (userId === null) continue;
    await sql`update oauth_records set user_id = ${userId} where model = ${row.model} and id = ${row.id}`.execute(
      db,
    );
  }
}

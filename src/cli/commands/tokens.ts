import type { Command } from 'commander';
import { SCOPES, type Scope } from '../../domain/scopes.ts';
import { jsonOption, requireApp, requireUser, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { type Column, emit, emitTable, grantJson, tokenJson } from '../output.ts';
import { parseDuration } from '../settings.ts';

function parseScopes(text: string): Scope[] {
  const scopes = text
    .split(/[,\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (scopes.length === 0) throw new CliError(`--scopes needs at least one of: ${SCOPES.join(', ')}`);
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new CliError(`unknown scope "${scope}": use ${SCOPES.join(', ')}`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}

/** The longest --expires-in: beyond a century, leave it out (no expiry) rather than pick a date. */
export const MAX_TOKEN_DAYS = 36_500;

function parseLifetime(text: string): number {
  const ms = parseDuration(text);
  if (ms > MAX_TOKEN_DAYS * 86_400_000) {
    throw new CliError(
      `--expires-in must be at most ${MAX_TOKEN_DAYS}d (100 years); leave it out for a token that never expires`,
    );
  }
  return ms;
}

/** The first columns of the token and grant listings: what was issued, to whom, for which app and scopes. */
const issuedColumns: Column<{ id: string; user: string; app: string; scopes: string[]; state: string }>[] = [
  ['ID', (row) => row.id],
  ['USER', (row) => row.user],
  ['APP', (row) => row.app],
  ['SCOPES', (row) => row.scopes.join(',')],
  ['STATE', (row) => row.state],
];

export function tokensCommand(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('issue, revoke and list access tokens, and list the OAuth grants they come under');
  tokens
    .command('issue')
    .description('print a new access token (shown once; only its hash is stored)')
    .requiredOption('--user <login>', 'the user whose data the token reads')
    .requiredOption('--app <name>', 'the app the token is issued to')
    .requiredOption('--scopes <a,b>', `comma-separated scopes: ${SCOPES.join(', ')}`)
    .option(
      '--expires-in <duration>',
      `lifetime, like 90s, 15m, 12h or 30d, at most ${MAX_TOKEN_DAYS}d (default: no expiry)`,
    )
    .option(...jsonOption)
    .action(
      async (
        opts: { user: string; app: string; scopes: string; expiresIn?: string; json?: boolean },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          const scopes = parseScopes(opts.scopes);
          const expiresAt = opts.expiresIn === undefined ? null : Date.now() + parseLifetime(opts.expiresIn);
          const user = await requireUser(store, opts.user);
          const app = await requireApp(store, opts.app);
          const issued = await store.tokens.issue({ userId: user.id, appId: app.id, scopes, expiresAt });
          emit(
            Boolean(opts.json),
            {
              token: issued.token,
              id: issued.id,
              scopes,
              expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString(),
            },
            () => issued.token,
          );
        }),
    );
  tokens
    .command('revoke <token-or-id>')
    .description(
      'revoke a token, given the token itself or its id; or an OAuth grant by its id, with all its tokens',
    )
    .option(...jsonOption)
    .action(async (ref: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const revoked = await store.tokens.revoke(ref);
        if (revoked) {
          emit(Boolean(opts.json), tokenJson(revoked), () => `revoked token ${revoked.id}`);
          return;
        }
        const grant = await store.oauth.grants.revoke(ref);
        if (!grant) throw new CliError('no such token or grant');
        emit(
          Boolean(opts.json),
          grantJson(grant),
          () => `revoked grant ${grant.id} of ${grant.userLogin} to ${grant.appName}, with its tokens`,
        );
      }),
    );
  tokens
    .command('list')
    .description('list tokens (never their secret value)')
    .option(...jsonOption)
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const all = (await store.tokens.list()).map((t) => tokenJson(t));
        emitTable(Boolean(opts.json), all, all, [
          ...issuedColumns,
          ['EXPIRES', (t) => t.expiresAt ?? 'never'],
          ['GRANT', (t) => t.grant ?? '-'],
        ]);
      }),
    );
  tokens
    .command('grants')
    .description('list OAuth grants: which user allowed which app what, and when it last got a token')
    .option('--user <login>', "only this user's grants")
    .option(...jsonOption)
    .action(async (opts: { user?: string; json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const user = opts.user === undefined ? undefined : await requireUser(store, opts.user);
        const all = (await store.oauth.grants.list(user?.id)).map(grantJson);
        emitTable(Boolean(opts.json), all, all, [
          ...issuedColumns,
          ['GRANTED', (g) => g.createdAt],
          ['LAST USED', (g) => g.lastUsedAt ?? 'never'],
        ]);
      }),
    );
}

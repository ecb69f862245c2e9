import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { iso } from '../../api/serialize.ts';
import { checkRedirectUri, RefusedRedirectUri } from '../../domain/redirect-uri.ts';
import { type App, hashToken, type OAuthClient } from '../../store/index.ts';
import type { ChessportCommand } from '../command.ts';
import { jsonOption, requireApp, withStore } from '../context.ts';
import { CliError } from '../errors.ts';
import { emit, emitTable } from '../output.ts';
import { MAX_KEY_NAME_LENGTH, parseName } from '../settings.ts';

/** A redirect URI of `--redirect-uri` (src/domain/redirect-uri.ts has the rule). */
export function parseRedirectUri(text: string): string {
  try {
    return checkRedirectUri(text);
  } catch (error) {
    if (error instanceof RefusedRedirectUri) throw new CliError(error.message);
    throw error;
  }
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** A confidential client's secret: shown once, only its SHA-256 is kept. */
function newClientSecret(): { secret: string; hash: string } {
  const secret = `cps_${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashToken(secret) };
}

function oauthText(client: OAuthClient | null): string {
  if (!client) return '-';
  const parts: string[] = [client.type];
  if (client.redirectUris.length > 0) parts.push(client.redirectUris.join(' '));
  if (client.deviceFlow) parts.push('device flow');
  return parts.join(', ');
}

/** An app as the CLI shows it; `owner` is the login of the user who registered it on /developers. */
function appJson(app: App, owner: string | null = null) {
  return {
    id: app.id,
    name: app.name,
    sector: app.sector,
    createdAt: iso(app.createdAt),
    clientId: app.oauth ? app.id : null,
    oauth: app.oauth,
    owner,
  };
}

/** What the operator hands the app's developer: the client id, and a confidential client's secret, once. */
function clientLines(app: App, secret: string | null): string {
  if (!app.oauth) return '';
  const lines = [`\nclient id: ${app.id}`];
  if (secret)
    lines.push(`client secret: ${secret}\n(shown once: only its hash is kept; give it to the app now)`);
  return lines.join('\n');
}

/** An app registered or updated (`done` says which), with the client secret it was given, if any. */
function emitClient(json: boolean, done: string, app: App, given: { secret: string } | null): void {
  const secret = given?.secret ?? null;
  emit(json, { ...appJson(app), clientSecret: secret }, () => `${done}${clientLines(app, secret)}`);
}

export function appsCommand(program: ChessportCommand): void {
  const apps = program.command('apps').description('manage the apps that tokens are issued to');
  apps
    .command('add <name>')
    .newNames()
    .description('register an app; with --redirect-uri or --device, as an OAuth client (docs/oauth.md)')
    .option(
      '--sector <sector>',
      'pairwise-id sector: apps of one sector see the same user ids (default: the app alone)',
    )
    .option(
      '--redirect-uri <uri>',
      'where the authorization code flow may send users back (repeat for more): https, or http on 127.0.0.1 or [::1]',
      collect,
    )
    .option('--device', 'the app may use the device flow (command-line tools, TVs)')
    .option('--public', 'a public client (native or browser app): PKCE and no client secret')
    .option(...jsonOption)
    .action(
      async (
        name: string,
        opts: { sector?: string; redirectUri?: string[]; device?: boolean; public?: boolean; json?: boolean },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          parseName(name, 'the app name', MAX_KEY_NAME_LENGTH);
          // An empty sector (`--sector "$SECTOR"` with the variable unset) would be one that every such app
          // shares, and with it the user ids, where leaving the option out gives the app its own.
          if (opts.sector !== undefined) parseName(opts.sector, '--sector');
          const redirectUris = [...new Set((opts.redirectUri ?? []).map(parseRedirectUri))];
          const isClient = redirectUris.length > 0 || Boolean(opts.device);
          if (opts.public && !isClient) {
            throw new CliError('--public makes an OAuth client: give --redirect-uri or --device too');
          }
          const oauth: OAuthClient | undefined = isClient
            ? {
                type: opts.public ? 'public' : 'confidential',
                redirectUris,
                deviceFlow: Boolean(opts.device),
              }
            : undefined;
          const secret = oauth?.type === 'confidential' ? newClientSecret() : null;
          const app = await store.accounts.addApp({
            name,
            sector: opts.sector,
            oauth,
            clientSecretHash: secret?.hash,
          });
          emitClient(Boolean(opts.json), `registered app ${name}`, app, secret);
        }),
    );
  apps
    .command('update <name>')
    .description('change an app as an OAuth client (making it one if it is not)')
    .option('--redirect-uri <uri>', 'the redirect URIs, replacing the ones it has (repeat for more)', collect)
    .option('--device', 'allow the device flow')
    .option('--no-device', 'stop allowing the device flow')
    .option('--public', 'when the app becomes an OAuth client: a public one, without a secret')
    .option('--new-secret', 'a confidential client: replace its secret (printed once)')
    .option(...jsonOption)
    .action(
      async (
        name: string,
        opts: {
          redirectUri?: string[];
          device?: boolean;
          public?: boolean;
          newSecret?: boolean;
          json?: boolean;
        },
        cmd: Command,
      ) =>
        withStore(cmd, async (store) => {
          const app = await requireApp(store, name);
          if (opts.public && app.oauth) {
            throw new CliError(
              `app "${name}" is a ${app.oauth.type} client already; its type does not change (register another app)`,
            );
          }
          const redirectUris =
            opts.redirectUri === undefined
              ? (app.oauth?.redirectUris ?? [])
              : [...new Set(opts.redirectUri.map(parseRedirectUri))];
          const deviceFlow = opts.device ?? app.oauth?.deviceFlow ?? false;
          if (redirectUris.length === 0 && !deviceFlow) {
            throw new CliError('an OAuth client needs --redirect-uri or the device flow (--device)');
          }
          const type = app.oauth?.type ?? (opts.public ? 'public' : 'confidential');
          if (opts.newSecret && type !== 'confidential') {
            throw new CliError(`app "${name}" is a public client: it has no secret`);
          }
          const secret = type === 'confidential' && (opts.newSecret || !app.oauth) ? newClientSecret() : null;
          const client: OAuthClient = { type, redirectUris, deviceFlow };
          await store.accounts.setAppClient(app.id, client, secret?.hash);
          const updated = { ...app, oauth: client };
          emitClient(Boolean(opts.json), `updated app ${name}`, updated, secret);
        }),
    );
  apps
    .command('list')
    .description('list apps, with what makes each an OAuth client')
    .option(...jsonOption)
    .action(async (opts: { json?: boolean }, cmd: Command) =>
      withStore(cmd, async (store) => {
        const all = await store.accounts.listApps();
        // Apps made by the CLI have no owner; those made on /developers, the developer who made them.
        const logins = new Map((await store.accounts.listUsers()).map((u) => [u.id, u.login]));
        const ownerOf = (app: App) =>
          app.ownerId === null ? null : (logins.get(app.ownerId) ?? app.ownerId);
        emitTable(
          Boolean(opts.json),
          all.map((a) => appJson(a, ownerOf(a))),
          all,
          [
            ['NAME', (a) => a.name],
            ['SECTOR', (a) => a.sector],
            ['ID', (a) => a.id],
            ['OAUTH', (a) => oauthText(a.oauth)],
            ['OWNER', (a) => ownerOf(a) ?? '-'],
          ],
        );
      }),
    );
}

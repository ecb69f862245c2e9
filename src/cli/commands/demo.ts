import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { SCOPES } from '../../domain/scopes.ts';
import { importFile } from '../../import/index.ts';
import type { App, Store, User } from '../../store/index.ts';
import { openCliStore, settingsOf } from '../context.ts';
import { CliError } from '../errors.ts';
import { cliIo } from '../io.ts';
import { emit } from '../output.ts';
import { loadServerSettings, parsePort } from '../settings.ts';
import { StopSignals } from '../stop-signals.ts';
import { DEMO_STORE, maskUrl } from '../store-url.ts';

const DEMO_GAMES = fileURLToPath(new URL('../demo/classics.pgn', import.meta.url));

/** What find() gives, else what add() makes; when a demo started at the same time adds it first, that one. */
async function findOrAdd<T>(find: () => Promise<T | undefined>, add: () => Promise<T>): Promise<T> {
  const found = await find();
  if (found) return found;
  try {
    return await add();
  } catch (error) {
    const added = await find();
    if (added) return added;
    throw error;
  }
}

/**
 * Seeds a demo user, app and database with a few famous games; safe to run again, also several at once
 * (nothing is duplicated).
 */
async function seed(store: Store) {
  const user = await findOrAdd(
    () => store.accounts.findUser('demo'),
    () =>
      store.accounts.addUser({
        login: 'demo',
        name: 'Demo User',
        email: 'demo@example.org',
        image: 'https://example.org/avatars/demo.png',
      }),
  );
  const app = await findOrAdd(
    () => store.accounts.findApp('demo-app'),
    () => store.accounts.addApp({ name: 'demo-app' }),
  );
  // Looked up and created under the user's write lock: two demos at once make one database.
  const [database] = (await store.databases.findOrAdd(user.id, 'Classics')).databases;
  if (!database) throw new Error('the demo database was not created');
  await importFile({ store, database, file: DEMO_GAMES });
  const [first] = await store.games.list(user.id, { limit: 1, offset: 0 });
  return { user, app, database, gameId: first?.id ?? null };
}

/** A 30-day token of the demo user for the demo app, with every scope. */
async function issueDemoToken(store: Store, { user, app }: { user: User; app: App }): Promise<string> {
  const { token } = await store.tokens.issue({
    userId: user.id,
    appId: app.id,
    scopes: [...SCOPES],
    expiresAt: Date.now() + 30 * 86_400_000,
  });
  return token;
}

/**
 * A new password for the demo user, set by each run and printed once, so that the pages (the account, the
 * developer console, personal tokens, OAuth consent) can be signed in to.
 */
async function setDemoPassword(store: Store, user: User): Promise<string> {
  const { hashPassword } = await import('../../oauth/passwords.ts');
  const password = randomBytes(12).toString('base64url');
  await store.accounts.setPasswordHash(user.id, await hashPassword(password));
  return password;
}

export function demoCommand(program: Command): void {
  program
    .command('demo')
    .description(`a ready service: seeds ${DEMO_STORE} with a demo user and games, prints a token, serves`)
    .option('--host <host>', 'address to listen on (HOST, default 127.0.0.1)')
    .option('--port <port>', 'port to listen on (PORT, default 8080; 0 picks a free one)')
    .option('--no-serve', 'seed and print, but do not start the server')
    .option('--json', 'print the token and URLs as JSON')
    .action(async (opts: { host?: string; port?: string; serve: boolean; json?: boolean }, cmd: Command) => {
      const settings = settingsOf(cmd);
      const server = loadServerSettings(); // checked before the store opens, as serve does
      // The demo keeps its own file unless a store is named explicitly, so it never touches real data.
      const { databaseUrl } = cmd.optsWithGlobals() as { databaseUrl?: string };
      if (!databaseUrl && !cliIo().env.DATABASE_URL) settings.databaseUrl = DEMO_STORE;
      if (opts.host) settings.host = opts.host;
      if (opts.port !== undefined) settings.port = parsePort(opts.port, '--port');
      if (!opts.serve && settings.port === 0) {
        throw new CliError(
          '--port 0 picks a free port when the demo serves: with --no-serve, give the port to use',
        );
      }
      const signals = opts.serve ? new StopSignals() : undefined; // before the store opens: see serve.ts
      const store = await openCliStore(settings);
      const seeded = await seed(store);
      const { database, gameId } = seeded;
      // Serving first: the URLs name the port the server bound (0 picks a free one).
      let port = settings.port;
      if (signals) {
        settings.logLevel = cliIo().env.LOG_LEVEL || 'warn';
        const { runServer } = await import('../server.ts'); // see serve.ts
        port = Number(new URL((await runServer(store, settings, server, signals)).address).port);
      }
      // Issued once the server listens: a demo that cannot (its port taken) left a live 30-day token behind.
      const token = await issueDemoToken(store, seeded);
      const password = await setDemoPassword(store, seeded.user);
      const origin = `http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`;
      const base = `${origin}/api/v1`;
      const auth = `-H "Authorization: Bearer ${token}"`;
      const urls = [
        `${base}/me`,
        `${base}/databases`,
        `${base}/games?limit=2`,
        `${base}/games/${gameId}`,
        `${base}/games/${gameId}?format=pgn`,
        `${base}/databases/${database.slug}/games?format=pgn`,
        `${base}/games?result=1-0&limit=2`,
        `${base}/games?format=ndjson`,
      ];
      const pages = [`${origin}/account`, `${origin}/account/tokens`, `${origin}/developers`];
      const storeName = maskUrl(settings.databaseUrl);
      emit(Boolean(opts.json), { store: storeName, token, urls, login: 'demo', password, pages }, () =>
        [
          `chessport demo: store ${storeName}, user "demo", database "${database.slug}"`,
          '',
          `token: ${token}`,
          '',
          'try:',
          ...urls.map((url) => `  curl -s ${auth} '${url}'`),
          '',
          `sign in as "demo" with the password ${password} (set anew by each demo run) on the pages:`,
          `  ${pages[0]} (the account and its connected apps)`,
          `  ${pages[1]} (personal access tokens)`,
          `  ${pages[2]} (the developer console: register an app, its webhooks)`,
          '',
          `API reference: ${origin}/docs (the OpenAPI document: ${base}/openapi.json)`,
          '',
        ].join('\n'),
      );
      if (!opts.serve) return store.close();
      cliIo().stderr.write(`listening on ${base} (Ctrl-C stops)\n`);
    });
}

// The server and the seeding of the HTTP suites, in the test's own process: the application `chessport serve`
// builds (src/cli/server.ts apiOptions), listening on a free loopback port, on a temp store (tempEnv), and the
// users, apps, tokens, databases and games written through the store's resource objects and the import, as the
// CLI's commands write them. No child process starts: the suites whose subject is the process (signals, exit
// codes, the CLI's text, two instances, crashes, the log on stdout) keep harness.ts's startServer() and cli().
import type { FastifyInstance } from 'fastify';
import { openCliStore } from '../../src/cli/context.ts';
import { apiOptions } from '../../src/cli/server.ts';
import { loadServerSettings, loadSettings, loadStoreSettings } from '../../src/cli/settings.ts';
import { importFile } from '../../src/import/index.ts';
import { buildApp } from '../../src/server/app.ts';
import type { Database, Store } from '../../src/store/index.ts';
import type { Env } from './harness.ts';

export interface InProcessServer {
  /** http://127.0.0.1:<port>, as harness.ts's Server.base. */
  base: string;
  app: FastifyInstance;
  /** The server's own store: seed it through `seed(server.store)`. */
  store: Store;
  /** Every line the server has logged so far (JSON lines, as `chessport serve` prints them). */
  log(): string;
  /** Closes the server (its open connections included) and its store. */
  stop(): Promise<void>;
}

/**
 * The server of `chessport serve` on `env`'s store, in this process: the same settings from the same
 * environment (env.env, then `extraEnv`), LOG_LEVEL info unless given. No webhook worker runs, and no signal
 * stops it: stop() does.
 */
export async function serveInProcess(env: Env, extraEnv: NodeJS.ProcessEnv = {}): Promise<InProcessServer> {
  const vars = { ...env.env, LOG_LEVEL: 'info', ...extraEnv };
  const settings = loadSettings(vars);
  const server = loadServerSettings(vars);
  if (settings.redisUrl) throw new Error('serveInProcess: REDIS_URL is for the suites that start the server');
  const store = await openCliStore(settings);
  const secret = settings.secret ?? (await store.accounts.serverSecret());
  // As runServer: the server's reads wait briefly for a lock, then answer 503.
  await store.dialect.limitLockWaits(server.storeBusyTimeoutMs);
  store.dialect.dropSilentConnections(server.pgAnswerTimeoutMs);
  let lines = '';
  const app = buildApp({
    ...apiOptions(store, settings, server, secret, null),
    logStream: {
      write: (line) => {
        lines += line;
      },
    },
  });
  let base: string;
  try {
    base = await app.listen({ host: settings.host, port: 0 });
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    base,
    app,
    store,
    log: () => lines,
    stop: async () => {
      // Requests in flight (a long-poll, an export) are cut rather than awaited: the test has ended.
      const closing = app.close();
      app.server.closeAllConnections();
      await closing;
      await store.close();
    },
  };
}

/**
 * What the CLI's commands write, written through the store: `users add`, `apps add`, `tokens issue`,
 * `tokens revoke`, `databases add`, `import`. Names are looked up as the commands look them up.
 */
export function seed(store: Store) {
  const user = async (login: string) => {
    const found = await store.accounts.findUser(login);
    if (!found) throw new Error(`no user "${login}"`);
    return found;
  };
  return {
    addUser: (login: string, details: { name?: string; email?: string; image?: string } = {}) =>
      store.accounts.addUser({ login, ...details }),
    addApp: (name: string) => store.accounts.addApp({ name }),
    /** A token of `login` for `app`; `expiresInMs` as --expires-in (negative: one that has expired). */
    async issueToken(login: string, appName: string, scopes: string, expiresInMs?: number): Promise<string> {
      const app = await store.accounts.findApp(appName);
      if (!app) throw new Error(`no app "${appName}"`);
      const issued = await store.tokens.issue({
        userId: (await user(login)).id,
        appId: app.id,
        scopes: scopes.split(','),
        expiresAt: expiresInMs === undefined ? null : Date.now() + expiresInMs,
      });
      return issued.token;
    },
    revokeToken: (token: string) => store.tokens.revoke(token),
    addDatabase: async (login: string, name: string): Promise<Database> =>
      store.databases.add({ ownerId: (await user(login)).id, name, private: false, maxGames: null }),
    /** `chessport import file --user login --database ref`: the database (created when missing), as the CLI. */
    async importPgn(file: string, login: string, ref: string): Promise<{ id: string; slug: string }> {
      const { databases } = await store.databases.findOrAdd((await user(login)).id, ref);
      const [database] = databases;
      if (!database || databases.length > 1) throw new Error(`"${ref}" names ${databases.length} databases`);
      await importFile({ store, database, file });
      return { id: database.id, slug: database.slug };
    },
  };
}

/**
 * Runs `fn` on `env`'s store opened in this process, as a CLI command opens it (DATABASE_URL and PG_POOL_MAX of
 * env.env), and closes it: seeding for the suites whose server is a child process.
 */
export async function withStore<T>(env: Env, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openCliStore(loadStoreSettings(env.env));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

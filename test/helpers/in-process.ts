// The server and the seeding of the HTTP suites, in the test's own process: the application `chessport serve`
// builds (src/cli/server.ts apiOptions), listening on a free loopback port, on a temp store (tempEnv), and the
// users, apps, tokens, databases and games written through the store's resource objects and the import, as the
// CLI's commands write them. No child process starts: the suites whose subject is the process (signals from
// outside, exit codes, the CLI's text, crashes, the log on stdout) keep harness.ts's startServer() and cli().
// Two instances are two serveInProcess() calls; the counters of src/platform/metrics.ts are the process's,
// shared by every server a suite runs.
import { openCliStore } from '../../src/cli/context.ts';
import { runServer, type Serving } from '../../src/cli/server.ts';
import { loadServerSettings, loadSettings, loadStoreSettings } from '../../src/cli/settings.ts';
import { StopSignals } from '../../src/cli/stop-signals.ts';
import { importFile } from '../../src/import/index.ts';
import type { Database, Store } from '../../src/store/index.ts';
import type { Env } from './harness.ts';

export interface InProcessServer {
  /** http://127.0.0.1:<port>, as harness.ts's Server.base. */
  base: string;
  /** The server's own store: seed it through `seed(server.store)`. */
  store: Store;
  /** Every line the server has logged so far (JSON lines, as `chessport serve` prints them). */
  log(): string;
  /**
   * Stops the server as `signal` stops `chessport serve` (the webhook worker, Redis and the store close) and
   * gives its exit status. The connections still open are cut at once (a long-poll, an export the test no
   * longer reads), as the test has ended; with `graceful`, requests in flight finish first, up to
   * SHUTDOWN_TIMEOUT, as they do in `chessport serve`.
   */
  stop(signal?: NodeJS.Signals, options?: { graceful?: boolean }): Promise<number>;
}

/**
 * `chessport serve --port <port>` (a free one by default) on `env`'s store, in this process: runServer (src/cli/server.ts) with the same
 * settings from the same environment (env.env, then `extraEnv`; LOG_LEVEL info unless given), its webhook
 * worker, Redis and replicas included. Its log lines are kept apart (log()), and no signal of the process
 * reaches it: stop() delivers one.
 */
export async function serveInProcess(
  env: Env,
  extraEnv: NodeJS.ProcessEnv = {},
  port = 0,
): Promise<InProcessServer> {
  const vars = { ...env.env, LOG_LEVEL: 'info', ...extraEnv };
  const settings = { ...loadSettings(vars), port };
  const server = loadServerSettings(vars);
  const exited = Promise.withResolvers<number>();
  const signals = new StopSignals({ listen: false, exit: exited.resolve });
  const store = await openCliStore(settings);
  let lines = '';
  const logStream = {
    write: (line: string) => {
      lines += line;
    },
  };
  let serving: Serving;
  try {
    serving = await runServer(store, settings, server, signals, { logStream, exit: exited.resolve });
  } catch (error) {
    await store.close();
    throw error;
  }
  return {
    base: serving.address,
    store,
    log: () => lines,
    stop: async (signal = 'SIGTERM', { graceful = false } = {}) => {
      signals.deliver(signal);
      if (!graceful) serving.app.server.closeAllConnections();
      return exited.promise;
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

// Black-box test harness: a temp store, the real `chessport` CLI as a child process, the real server. Seeding
// through the CLI's commands (cliJson, importPgn, issueToken) runs them in the test's process (cli-in-process.ts):
// a child process costs about 0.4 s of CPU, and their subject is the data, not the process.
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { CliResult } from './cli-in-process.ts';
import { checkAgainstOpenApi } from './openapi-validate.ts';
import {
  createMigratedTestDatabaseSync,
  createTestDatabaseSync,
  dropTestDatabaseLater,
  STORE_DIALECT,
  storeEnv,
  type TestDialect,
} from './stores.ts';

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/chessport.js');
export const FIXTURES = join(ROOT, 'test/fixtures');

/**
 * Counts the child processes of `chessport` this harness starts, for docs/performance.md: with
 * CHESSPORT_TEST_COUNT_CHILDREN=<file>, one line per child (its kind) is appended to the file.
 */
function counted(kind: string): void {
  const file = process.env.CHESSPORT_TEST_COUNT_CHILDREN;
  if (file) appendFileSync(file, `${kind} ${relative(ROOT, process.argv[1] ?? '')}\n`);
}

export interface Env {
  dir: string;
  /** Where DATABASE_URL points: a SQLite file in `dir`, or a fresh PostgreSQL database (STORE_DIALECT). */
  databaseUrl: string;
  dialect: TestDialect;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/**
 * A fresh temp folder with its own empty store and server secret. The store is a SQLite file in the folder,
 * or in the PostgreSQL pass of `npm test` a new database on TEST_POSTGRES_URL; cleanup() removes either. The
 * new database has the migrations applied already (a copy of a template, stores.ts), as the first command
 * would apply them; `emptyDatabase` makes it bare, for a suite whose subject is what the first open does.
 */
export function tempEnv(extra: NodeJS.ProcessEnv = {}, options: { emptyDatabase?: boolean } = {}): Env {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-test-'));
  const dialect = STORE_DIALECT;
  const databaseUrl =
    dialect !== 'postgres'
      ? join(dir, 'store.sqlite')
      : options.emptyDatabase
        ? createTestDatabaseSync()
        : createMigratedTestDatabaseSync();
  // Heavy requests are not shed for a late event loop (SHED_EVENT_LOOP_DELAY_MS=0): a test machine busy with
  // other suites is late often, and a 503 there says nothing of what a test checks; the suites of load
  // shedding set it (or the heap's share) themselves.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...storeEnv(databaseUrl),
    LOG_LEVEL: 'warn',
    SHED_EVENT_LOOP_DELAY_MS: '0',
  };
  delete env.CHESSPORT_SECRET;
  Object.assign(env, extra);
  const cleanup = () => {
    rmSync(dir, { recursive: true, force: true });
    if (dialect === 'postgres') dropTestDatabaseLater(databaseUrl);
  };
  return { dir, databaseUrl, dialect, env, cleanup };
}

export type { CliResult };

/** How a spawned command ended, with all it wrote. */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Spawned {
  child: ChildProcess;
  /** What it has written so far. */
  output(): { stdout: string; stderr: string };
  exited: Promise<Exit>;
}

/** Starts `chessport <args>` without waiting for it: for tests that signal or kill it mid-run. */
export function spawnCli(env: Env, args: string[]): Spawned {
  counted('spawnCli');
  const child = spawn(process.execPath, [BIN, ...args], {
    env: env.env,
    cwd: env.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, output: () => ({ stdout, stderr }), exited };
}

/** Runs `chessport <args>`; never throws on a non-zero exit. */
export async function cli(env: Env, args: string[], options: { cwd?: string } = {}): Promise<CliResult> {
  counted('cli');
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], {
      env: env.env,
      cwd: options.cwd ?? env.dir,
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/**
 * Runs `chessport <args>` in this process (cliInProcess), then as the real binary (cli()), and checks that both
 * end alike: one exit code, one stdout, one stderr. For a command that changes nothing (a failure, a listing):
 * each suite that runs its commands in-process proves with it, for a success and a failure, that the real
 * `chessport` says the same.
 */
export async function cliBothWays(env: Env, args: string[]): Promise<CliResult> {
  const { cliInProcess } = await import('./cli-in-process.ts'); // as cliJson's
  const inProcess = await cliInProcess(env, args);
  assert.deepEqual(
    await cli(env, args),
    inProcess,
    `chessport ${args.join(' ')}: child process and in-process`,
  );
  return inProcess;
}

/**
 * Runs a command that must succeed and print JSON (it gets --json), and returns the parsed output. It runs in
 * this process (cliInProcess: relative paths in `args` are read from env.dir, as the child reads them),
 * or as a child process with `childProcess` (for a suite whose subject is several processes at once) or when
 * env sets NODE_OPTIONS of its own.
 */
export async function cliJson<T = Record<string, unknown>>(
  env: Env,
  args: string[],
  options: { childProcess?: boolean } = {},
): Promise<T> {
  const { cliInProcess } = await import('./cli-in-process.ts'); // loaded by the suites that seed only
  // NODE_OPTIONS (a clock moved by an --import, say) acts only on a process that starts with it.
  const child = options.childProcess || env.env.NODE_OPTIONS !== process.env.NODE_OPTIONS;
  const run = child ? cli : cliInProcess;
  const result = await run(env, [...args, '--json']);
  if (result.code !== 0)
    throw new Error(`chessport ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** `chessport import file --user user --database database --json`: the database the games went to. */
export async function importPgn(
  env: Env,
  file: string,
  user: string,
  database: string,
): Promise<{ id: string; slug: string }> {
  // As the command run in env.dir reads a relative path.
  const args = ['import', resolve(env.dir, file), '--user', user, '--database', database];
  return (await cliJson<{ database: { id: string; slug: string } }>(env, args)).database;
}

/** Issues a token through `chessport tokens issue` and returns it (extra: e.g. ['--expires-in', '1h']). */
export async function issueToken(
  env: Env,
  user: string,
  app: string,
  scopes: string,
  extra: string[] = [],
): Promise<string> {
  const args = ['tokens', 'issue', '--user', user, '--app', app, '--scopes', scopes, ...extra];
  return (await cliJson<{ token: string }>(env, args)).token;
}

export interface Server {
  base: string;
  process: ChildProcess;
  /** Everything the server has printed so far, stdout and stderr. */
  log(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `chessport serve` on a free port (or the given one) and waits until it listens. */
export async function startServer(env: Env, extraEnv: NodeJS.ProcessEnv = {}, port = 0): Promise<Server> {
  counted('serve');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env: { ...env.env, LOG_LEVEL: 'info', ...extraEnv },
    cwd: env.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const base = await new Promise<string>((resolvePromise, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening at (http:\/\/[0-9.:[\]a-z]+)/i.exec(output);
      if (m?.[1]) resolvePromise(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)));
    // Against a hang only: a busy machine starts it slowly.
    setTimeout(() => reject(new Error(`server did not start in 60 s:\n${output}`)), 60_000).unref();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    base,
    process: child,
    log: () => output,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * The server's log up to now. Its lines come over a pipe, apart from its answers, so an answer can arrive
 * before the lines written while it was made: a request marked with an id of its own is made, and its line
 * awaited, after which every line written before it is in.
 */
export async function settledLog(server: Pick<Server, 'base' | 'log'>): Promise<string> {
  const mark = randomUUID();
  await (await fetch(`${server.base}/healthz`, { headers: { 'x-request-id': mark } })).arrayBuffer();
  for (let waited = 0; !server.log().includes(mark); waited += 20) {
    if (waited > 60_000) throw new Error(`the server did not log request ${mark}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return server.log();
}

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

/**
 * One HTTP request; the body is read whole and parsed as JSON when it is JSON. Every answer under /api/v1 is
 * checked against the server's own OpenAPI document (openapi-validate.ts): a mismatch fails the test.
 */
export async function http<T = Record<string, unknown>>(
  base: string,
  path: string,
  init: { method?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const url = `${base}${path}`;
  const method = init.method ?? 'GET';
  const response = await fetch(url, { method, headers });
  const text = await response.text();
  await checkAgainstOpenApi({ url, method, status: response.status, headers: response.headers, text });
  const isJson = response.headers.get('content-type')?.includes('application/json');
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: (isJson && text ? JSON.parse(text) : null) as T,
  };
}

// Black-box test harness: a temp store, the real `chessport` CLI as a child process, the real server.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/chessport.js');
export const FIXTURES = join(ROOT, 'test/fixtures');
export const SHARED_PGN = resolve(ROOT, '../shared/pgn');

export interface Env {
  dir: string;
  databaseUrl: string;
  env: NodeJS.ProcessEnv;
  cleanup(): void;
}

/** A fresh temp folder with its own SQLite store and server secret. */
export function tempEnv(extra: NodeJS.ProcessEnv = {}): Env {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-test-'));
  const databaseUrl = join(dir, 'store.sqlite');
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  delete env.CHESSPORT_SECRET;
  Object.assign(env, extra);
  return { dir, databaseUrl, env, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `chessport <args>`; never throws on a non-zero exit. */
export async function cli(env: Env, args: string[], options: { cwd?: string } = {}): Promise<CliResult> {
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

/** Runs a command that must succeed and print JSON (it gets --json), and returns the parsed output. */
export async function cliJson<T = Record<string, unknown>>(env: Env, args: string[]): Promise<T> {
  const result = await cli(env, [...args, '--json']);
  if (result.code !== 0)
    throw new Error(`chessport ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

export interface Server {
  base: string;
  process: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `chessport serve` on a free port and waits until it listens. */
export async function startServer(env: Env, extraEnv: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], {
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
    setTimeout(() => reject(new Error(`server did not start in 20s:\n${output}`)), 20_000).unref();
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    base,
    process: child,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface Answer<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  json: T;
}

/** One HTTP request; the body is read whole and parsed as JSON when it is JSON. */
export async function http<T = Record<string, unknown>>(
  base: string,
  path: string,
  init: { method?: string; token?: string | null; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const response = await fetch(`${base}${path}`, { method: init.method ?? 'GET', headers });
  const text = await response.text();
  const isJson = response.headers.get('content-type')?.includes('application/json');
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: (isJson && text ? JSON.parse(text) : null) as T,
  };
}

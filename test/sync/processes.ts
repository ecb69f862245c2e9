// Child processes the sync tests control directly: a sync they can kill, and a server on a chosen port
// (a restarted server must keep its address, or the mirror would rightly refuse to follow it).
import { type ChildProcess, spawn } from 'node:child_process';
import { BIN, type Env, type Server } from '../helpers/harness.ts';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunningSync {
  child: ChildProcess;
  exited: Promise<Exit>;
}

/** Starts `chessport sync <args>` without waiting for it. */
export function spawnSync(env: Env, args: string[]): RunningSync {
  const child = spawn(process.execPath, [BIN, 'sync', ...args], {
    env: env.env,
    cwd: env.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exited };
}

/** `chessport serve --port <port>`, resolved once it listens. */
export async function serveOn(env: Env, port: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<Server> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    env: { ...env.env, LOG_LEVEL: 'info', ...extraEnv },
    cwd: env.dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /listening at (http:\/\/[0-9.:[\]a-z]+)/i.exec(output);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)));
    setTimeout(() => reject(new Error(`server did not start in 20s:\n${output}`)), 20_000).unref();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    base,
    process: child,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

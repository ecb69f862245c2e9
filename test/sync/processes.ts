// A `chessport sync` child process the sync tests control directly: one they can kill mid-run.
import { type ChildProcess, spawn } from 'node:child_process';
import { BIN, type Env } from '../helpers/harness.ts';

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

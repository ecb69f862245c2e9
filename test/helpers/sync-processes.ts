// A `chessport sync` child process the sync tests control directly: one they can kill mid-run.
import type { ChildProcess } from 'node:child_process';
import { type Env, type Exit, spawnCli } from './harness.ts';

export type { Exit };

export interface RunningSync {
  child: ChildProcess;
  exited: Promise<Exit>;
}

/** Starts `chessport sync <args>` without waiting for it. */
export function spawnSync(env: Env, args: string[]): RunningSync {
  const { child, exited } = spawnCli(env, ['sync', ...args]);
  return { child, exited };
}

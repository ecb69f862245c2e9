// A `chessport sync` child process the sync tests control directly: one they can kill mid-run, and the
// device-flow prompt a `sync --login` prints (in a child process, or in the test's: startInProcess).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import type { StartedInProcess } from './cli-in-process.ts';
import { type Env, type Exit, type Spawned, spawnCli } from './harness.ts';

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

/** The address and code a `sync --login` prints on stderr, once it has (within 60 s, or until it exits). */
export async function devicePrompt(sync: Spawned | StartedInProcess): Promise<{ uri: string; code: string }> {
  const ended = () => ('child' in sync ? sync.child.exitCode !== null : sync.ended());
  for (let i = 0; i < 600; i++) {
    const { stderr } = sync.output();
    const m = /open (\S+) in a browser and enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr);
    if (m?.[1] && m[2]) return { uri: m[1], code: m[2] };
    if (ended()) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`the sync printed no code:\n${sync.output().stderr}`);
}

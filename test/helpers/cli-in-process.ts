// The `chessport` command run in the test's own process: the program main.ts runs (src/cli/program.ts), with
// env's environment and its output collected (src/cli/io.ts), and a failure caught as main.ts catches it. For
// the suites that seed through the CLI's commands and whose subject is not the CLI's process; those whose
// subject it is (signals, exit by a signal, the text on a terminal, two instances, crashes) keep harness.ts's
// cli() and spawnCli(), which start `chessport` as a child process.
import { Readable } from 'node:stream';
import { CommanderError } from 'commander';
import { type CliIo, runWithIo } from '../../src/cli/io.ts';
import { failureReport } from '../../src/cli/output.ts';
import { chessportProgram } from '../../src/cli/program.ts';

/** How a command ended, with all it wrote (cliInProcess, and harness.ts's cli()). */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command running in this process, which the next one waits for (cliInProcess). */
let running: Promise<unknown> = Promise.resolve();

/** What cliInProcess gives the command beside its arguments, as cli() gives the child process. */
export interface InProcessOptions {
  /** The working folder the command reads through CliIo (cwd; default env.dir), as cli()'s `cwd`. */
  cwd?: string;
  /** Its standard input, whole (default: empty), as a pipe that a script writes and closes. */
  stdin?: string;
}

/**
 * Runs `chessport <args>` in this process with env.env for its environment: the code, stdout and stderr that
 * the child process of cli() gives, for a command that ends by itself. The command reads relative paths (its
 * inputs, --rejects, --out, a SQLite store) from `cwd` (default env.dir) as the child does, through CliIo
 * (src/cli/io.ts inWorkingFolder). Differences: a relative path that the command says back is said joined
 * to `cwd`, where the child says it as given; standard input is `stdin` or empty, never a terminal; a command
 * that dies of a signal (CliError.signal) returns code 1 with its line, where the process would die. Commands
 * run here one at a time: a SQLite store's busy wait blocks the thread, so a second command waiting for the
 * first's write lock would keep the first from ever finishing (each child process has a thread of its own).
 */
export function cliInProcess(
  env: { env: NodeJS.ProcessEnv; dir: string },
  args: string[],
  options: InProcessOptions = {},
): Promise<CliResult> {
  return startInProcess(env, args, options).exited;
}

/** A command started in this process (startInProcess), as harness.ts's Spawned is one in a child process. */
export interface StartedInProcess {
  /** What it has written so far. */
  output(): { stdout: string; stderr: string };
  /** Whether it has returned. */
  ended(): boolean;
  exited: Promise<CliResult>;
}

/**
 * Starts `chessport <args>` in this process as cliInProcess runs it, without waiting for it: for a test that
 * reads what the command prints while it runs (the code a `sync --login` waits with). It runs once the
 * commands started before it have returned, and those started after it wait for it.
 */
export function startInProcess(
  env: { env: NodeJS.ProcessEnv; dir: string },
  args: string[],
  options: InProcessOptions = {},
): StartedInProcess {
  const written = { stdout: '', stderr: '' };
  let ended = false;
  const exited = running.then(() => runInProcess(env, args, options, written));
  running = exited.catch(() => undefined);
  void exited.then(
    () => {
      ended = true;
    },
    () => {
      ended = true;
    },
  );
  return { output: () => ({ ...written }), ended: () => ended, exited };
}

async function runInProcess(
  env: { env: NodeJS.ProcessEnv; dir: string },
  args: string[],
  options: InProcessOptions,
  written: { stdout: string; stderr: string },
): Promise<CliResult> {
  let exitCode: number | undefined;
  const io: CliIo = {
    stdout: {
      write: (text, done) => {
        written.stdout += text;
        done?.();
        return true;
      },
    },
    stderr: {
      write: (text, done) => {
        written.stderr += text;
        done?.();
        return true;
      },
    },
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: env.env,
    cwd: options.cwd ?? env.dir,
    setExitCode: (code) => {
      exitCode = code;
    },
  };
  return runWithIo(io, async () => {
    try {
      await chessportProgram().parseAsync(args, { from: 'user' });
      return { code: exitCode ?? 0, ...written };
    } catch (error) {
      if (error instanceof CommanderError) return { code: error.exitCode, ...written };
      written.stderr += failureReport(error);
      return { code: 1, ...written };
    }
  });
}

// What a command reads and writes of its process: standard output and error, standard input, the environment,
// the working folder and the exit code. A command reads them through cliIo(), which is the process's own unless runWithIo() gave
// others to the commands it runs (the tests that run a command in their own process, test/helpers/harness.ts
// cliInProcess): `chessport` itself always has the process's.
import { AsyncLocalStorage } from 'node:async_hooks';
import { isAbsolute, join } from 'node:path';

/** Where a command writes: a stream, a terminal's when isTTY (progress lines then redraw, `columns` wide). */
export interface CliOutput {
  write(text: string, done?: (error?: Error | null) => void): boolean;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

export interface CliIo {
  stdout: CliOutput;
  stderr: CliOutput;
  /** Standard input: a password given with --stdin; the terminal's (isTTY) to ask for one. */
  stdin: NodeJS.ReadableStream & { readonly isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** The working folder: where an import writes the rejects of an input whose folder is read-only. */
  cwd: string;
  /** The exit code once the command returns (`sync --watch` ending on an error it reported). */
  setExitCode(code: number): void;
}

const processIo: CliIo = {
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
  get stdin() {
    return process.stdin;
  },
  get env() {
    return process.env;
  },
  get cwd() {
    return process.cwd();
  },
  setExitCode(code) {
    process.exitCode = code;
  },
};

const given = new AsyncLocalStorage<CliIo>();

/** The io of the command running: runWithIo's, else the process's. */
export function cliIo(): CliIo {
  return given.getStore() ?? processIo;
}

/** Runs `fn` with `io` as what cliIo() returns, in it and in everything it starts. */
export function runWithIo<T>(io: CliIo, fn: () => T): T {
  return given.run(io, fn);
}

/**
 * A path as the command's working folder (cliIo().cwd) reads it. Where that is the process's own, which the
 * system reads relative paths from, the path as given, so that what the command prints of it is as typed;
 * else (commands run in another's process) a relative one joined to it. An empty name stays empty: no path.
 */
export function inWorkingFolder(path: string): string {
  const { cwd } = cliIo();
  return path === '' || isAbsolute(path) || cwd === process.cwd() ? path : join(cwd, path);
}

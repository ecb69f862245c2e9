// The `chessport` command.
import { CommanderError } from 'commander';
import { CliError } from './errors.ts';
import { failureReport } from './output.ts';
import { chessportProgram } from './program.ts';
import { dieOf } from './stop-signals.ts';

// A reader that goes away (`chessport import … | head -1`) ends the output, not the command: the work goes on
// (an import of several files imports them all) and its output is dropped, where Node threw EPIPE with a
// stack trace. Writes after the first failure fail as the stream is destroyed: dropped too.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}

const program = chessportProgram();

try {
  await program.parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  process.stderr.write(failureReport(error));
  // A pipe takes what it can at once and Node queues the rest, which an exit drops: the wait lets a long
  // --json document (an import that stopped, with its rejections) reach the reader whole.
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  if (error instanceof CliError && error.signal) dieOf(error.signal);
  process.exit(1);
}

/** Resolves once what was written to `stream` before is written out (or the stream failed: see above). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableLength === 0) resolve();
    else stream.write('', () => resolve());
  });
}

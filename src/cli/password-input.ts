// Reading a password: from the terminal without echo (twice, to catch a typo), or whole from standard input
// for scripts (--stdin). It is never printed, logged or kept beyond its hash.
import { text } from 'node:stream/consumers';
import { CliError } from './errors.ts';
import { cliIo } from './io.ts';

/** One line typed on the terminal, not echoed; Ctrl-C cancels, Ctrl-D ends the line. */
function askHidden(prompt: string): Promise<string> {
  // Only asked where standard input is a terminal (readPassword): a tty.ReadStream.
  const input = cliIo().stdin as NodeJS.ReadStream;
  cliIo().stderr.write(prompt);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      cliIo().stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: string) => {
      for (const c of chunk) {
        if (c === '\r' || c === '\n' || c === '\u0004') return done();
        if (c === '\u0003') return done(new CliError('cancelled', { signal: 'SIGINT' }));
        if (c === '\u007f' || c === '\b') typed = [...typed].slice(0, -1).join('');
        else if (c >= ' ') typed += c;
      }
    };
    input.on('data', onData);
  });
}

/** The password: from standard input with --stdin (one trailing line break dropped), else asked twice. */
export async function readPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) return (await text(cliIo().stdin)).replace(/\r?\n$/, '');
  if (!cliIo().stdin.isTTY) {
    throw new CliError('standard input is not a terminal: give the password on it with --stdin');
  }
  const first = await askHidden('New password: ');
  const again = await askHidden('Again: ');
  if (first !== again) throw new CliError('the two passwords differ: nothing changed');
  return first;
}

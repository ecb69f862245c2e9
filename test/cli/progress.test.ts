// The import's progress line: games, rate, bytes of the total and an ETA; for a pipe, whose size is
// unknown, bytes alone. On a terminal it never takes a whole row (a wrapped line leaves a row behind at each
// redraw), and its ETA waits for a second of work.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { duration, fitted, progressReporter } from '../../src/cli/progress.ts';

/** A terminal-like stream of `columns` that keeps what is written. */
function terminal(columns = 200) {
  const written: string[] = [];
  const stream = {
    isTTY: true,
    columns,
    write: (text: string) => written.push(text) > 0,
  } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

/** A pipe or file: no terminal. */
function plain() {
  const written: string[] = [];
  const stream = {
    isTTY: false,
    write: (text: string) => written.push(text) > 0,
  } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

test('a file shows bytes of its size and an ETA once a second has passed; a pipe (size 0) bytes only', async () => {
  const file = terminal();
  const early = progressReporter(file.stream);
  early.update({ file: 'a.pgn', games: 10, bytes: 1e6, totalBytes: 4e6 });
  // In the first second the workers start and the code warms up: an ETA from it was a fraction of the time.
  assert.match(file.written.join(''), /a\.pgn: 10 games, \d+ games\/s, 1\.0 MB of 4\.0 MB, ETA \.\.\.$/);
  await sleep(1050);
  early.update({ file: 'a.pgn', games: 20, bytes: 1e6, totalBytes: 4e6 });
  // A quarter done after about a second: three more.
  assert.match(file.written.at(-1) ?? '', /a\.pgn: 20 games, \d+ games\/s, 1\.0 MB of 4\.0 MB, ETA [34]s$/);
  const pipe = terminal();
  progressReporter(pipe.stream).update({ file: '/dev/stdin', games: 10, bytes: 55e6, totalBytes: 0 });
  assert.match(pipe.written.join(''), /\/dev\/stdin: 10 games, \d+ games\/s, 55\.0 MB$/);
});

test('an ETA of minutes or hours reads as such', () => {
  assert.equal(duration(0.2), '1s');
  assert.equal(duration(59), '59s');
  assert.equal(duration(185), '3m05s');
  assert.equal(duration(3725), '1h02m');
});

test('the line never takes a whole row: the name gives way from its start, then rate and bytes, then the name', () => {
  const name = '/srv/chess/pgn/large/stockfish-books__bjbraams_chessdb_198350_lines.pgn';
  const stats = '34750 games, 17005 games/s, 4.2 MB of 16.4 MB, ETA 6s';
  const short = '34750 games, 25%, ETA 6s';
  for (let columns = 10; columns <= 200; columns++) {
    const line = fitted('[2/3] ', name, stats, short, columns);
    assert.ok(line.length < columns, `${columns} columns: ${line}`);
  }
  assert.equal(fitted('', name, stats, short, 200), `${name}: ${stats}`);
  const at80 = fitted('[2/3] ', name, stats, short, 80);
  assert.equal(at80.length, 79);
  assert.ok(at80.startsWith('[2/3] ...') && at80.endsWith(`_lines.pgn: ${stats}`), at80);
  assert.equal(fitted('[2/3] ', name, stats, short, 50), `[2/3] ...8350_lines.pgn: ${short}`);
  assert.equal(fitted('[2/3] ', name, stats, short, 32), `[2/3] ${short}`);
});

test('the terminal line follows the width the terminal has now', async () => {
  const tty = terminal(120);
  const reporter = progressReporter(tty.stream);
  const p = { file: `/data/${'x'.repeat(60)}.pgn`, games: 10, bytes: 1e6, totalBytes: 4e6 };
  reporter.update(p);
  (tty.stream as { columns: number }).columns = 40; // a resize: Node updates columns on SIGWINCH
  await sleep(250); // the line is redrawn at most every 200 ms
  reporter.update(p);
  const lines = tty.written.join('').split('\r\x1b[2K').filter(Boolean);
  assert.equal(lines.length, 2);
  const [wide, narrow] = lines as [string, string];
  assert.ok(wide.length > 100);
  assert.ok(narrow.length < 40, narrow);
});

test('not on a terminal: a plain line each 5 s, none at all with --json (quiet)', {
  timeout: 20_000,
}, async () => {
  const log = plain();
  const json = plain();
  const reporters = [progressReporter(log.stream), progressReporter(json.stream, { quiet: true })];
  const p = { file: 'a.pgn', games: 10, bytes: 1e6, totalBytes: 4e6 };
  for (const reporter of reporters) reporter.update(p);
  assert.deepEqual(log.written, [], 'none for an import shorter than 5 s');
  await sleep(5050);
  for (const reporter of reporters) reporter.update(p);
  assert.match(log.written.join(''), /^a\.pgn: 10 games, .*\n$/);
  assert.deepEqual(json.written, []);
  // On a terminal the live line is shown with --json too: it is cleared, and stdout holds the document.
  const tty = terminal();
  progressReporter(tty.stream, { quiet: true }).update(p);
  assert.equal(tty.written.length, 1);
});

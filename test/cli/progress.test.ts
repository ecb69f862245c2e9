// The import's progress line: games, rate, bytes of the total and an ETA; for a pipe, whose size is
// unknown, bytes alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { progressReporter } from '../../src/cli/progress.ts';

/** A terminal-like stream that keeps what is written. */
function terminal() {
  const written: string[] = [];
  const stream = {
    isTTY: true,
    write: (text: string) => written.push(text) > 0,
  } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

test('a file shows bytes of its size and an ETA; a pipe (size 0) shows bytes only', async () => {
  await sleep(250); // the line is redrawn at most every 200 ms
  const file = terminal();
  progressReporter(file.stream).update({ file: 'a.pgn', games: 10, bytes: 1e6, totalBytes: 4e6 });
  assert.match(file.written.join(''), /a\.pgn: 10 games, \d+ games\/s, 1\.0 MB of 4\.0 MB, ETA \d+s$/);
  const pipe = terminal();
  progressReporter(pipe.stream).update({ file: '/dev/stdin', games: 10, bytes: 55e6, totalBytes: 0 });
  assert.match(pipe.written.join(''), /\/dev\/stdin: 10 games, \d+ games\/s, 55\.0 MB$/);
});

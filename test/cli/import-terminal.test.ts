// The import on a real terminal (a pseudo-terminal through script(1)): its live line must fit in a row of a
// narrow terminal (a line that wraps leaves a row behind at each redraw: at 80 columns, any path of 30
// characters did), be cleared before each summary, and be cleared by Ctrl-C too, which stops the import
// saying how far it got, with the exit status of SIGINT.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { BIN, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { writeGames } from '../helpers/production.ts';

const SCRIPT = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'kim']);
});
after(() => env?.cleanup());

/**
 * `command` in a shell on a pseudo-terminal of `columns`; what it shows, its exit status (script -e), and a
 * way to type on it. The paths of the tests hold no character the shell would read otherwise.
 */
function onTerminal(command: string, columns: number) {
  const child = spawn('script', ['-qefc', `stty cols ${columns}; exec ${command}`, '/dev/null'], {
    env: env.env,
    cwd: env.dir,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let shown = '';
  child.stdout.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
  });
  return {
    shown: () => shown,
    type: (text: string) => child.stdin.write(text),
    exited: once(child, 'exit').then(([code]) => {
      child.stdin.end();
      return code as number;
    }),
  };
}

/** What was drawn between the line clearings (CR, erase line), which begin each redraw and each summary. */
function draws(shown: string): string[] {
  return shown.split('\r\x1b[2K').slice(1);
}

describe('the import on a terminal', {
  skip: !SCRIPT && 'needs script(1) (util-linux) for a pseudo-terminal',
}, () => {
  test('40 columns: each redraw fits in a row, and the line is cleared before each summary', {
    timeout: 60_000,
  }, async () => {
    const long = 'a-collection-of-games-with-a-name-longer-than-forty-columns';
    const a = writeGames(env.dir, `${long}-1.pgn`, 30_000, 'Narrow');
    const b = writeGames(env.dir, `${long}-2.pgn`, 2_000, 'Second');
    const t = onTerminal(`${process.execPath} ${BIN} import ${a} ${b} --user kim --database narrow`, 40);
    assert.equal(await t.exited, 0, t.shown());
    const drawn = draws(t.shown());
    const progress = drawn.filter((d) => !d.includes('\n'));
    assert.ok(progress.length >= 2, `redrawn: ${JSON.stringify(drawn)}`);
    for (const line of progress)
      assert.ok(line.length < 40, `wider than 39 columns: ${JSON.stringify(line)}`);
    assert.match(progress[0] as string, /^\[1\/2\] /);
    // The summaries, each after a clearing: none begins behind a progress line.
    const summaries = drawn.filter((d) => d.includes('\n'));
    assert.equal(summaries.length, 2);
    assert.match(summaries[0] as string, /^\S+-1\.pgn: 30000 imported, 0 duplicates skipped, 0 rejected \(/);
    assert.match(
      summaries[1] as string,
      /^\S+-2\.pgn: 2000 imported, [^\n]+\r\ntotal: 32000 imported, 0 duplicates skipped, 0 rejected \(32000 games in 2 files read in \d+\.\ds\)\r\n$/,
    );
  });

  test('Ctrl-C: the line is cleared, the stopped file summed up, a line saying how far it got; status 130', {
    timeout: 60_000,
  }, async () => {
    const fifo = join(env.dir, 'typed.fifo');
    execFileSync('mkfifo', [fifo]);
    const t = onTerminal(`${process.execPath} ${BIN} import ${fifo} --user kim --database typed`, 80);
    const input = createWriteStream(fifo);
    input.on('error', () => undefined);
    input.write(writeGamesText(6000)); // and the pipe stays open: the import waits for more
    const deadline = Date.now() + 30_000;
    while (!/typed\.fifo: [1-9]\d* games/.test(t.shown())) {
      assert.ok(Date.now() < deadline, `a progress line with games: ${JSON.stringify(t.shown())}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    t.type('\x03'); // the terminal sends SIGINT to the import
    assert.equal(await t.exited, 130, t.shown());
    input.destroy();
    const last = draws(t.shown()).at(-1) as string;
    assert.match(
      last,
      /^\S*typed\.fifo: (\d+) imported, 0 duplicates skipped, 0 rejected \([^\n]+\r\n {2}stopped part-way: the rest of this file was not read\r\nchessport: \S*typed\.fifo: the import stopped after \1 games were imported: interrupted \(SIGINT\); run the command again to finish it: the games already stored are skipped\r\n$/,
    );
  });
});

/** `n` distinct short games as one text. */
function writeGamesText(n: number): string {
  const out: string[] = [];
  for (let i = 1; i <= n; i++)
    out.push(`[White "Typed ${i}"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n`);
  return `${out.join('\n')}\n`;
}

// Ctrl-C (SIGINT) or SIGTERM during an import. Node's default action killed the command where it was: no word
// of how far it got, the progress line left under the prompt, the rejected games still queued for the rejects
// file lost, and with --json no output at all. Now the import stops at its next game, writes the games it has
// checked and their rejects, says how far it got (with --json, the summaries so far and "stopped"), and then
// dies of the signal, as a shell expects of a command interrupted. The inputs are named pipes that the test
// keeps open: the import is surely part-way, and its read waits for more, which the signal must end too.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, type WriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { cliJson, type Env, spawnCli, tempEnv } from '../helpers/harness.ts';
import { queryStore } from '../helpers/stores.ts';

/** Distinct games numbered from `from`; every tenth plays an illegal move and is rejected. */
function games(from: number, n: number): string {
  const out: string[] = [];
  for (let i = from; i < from + n; i++) {
    const moves = i % 10 === 9 ? '1. e4 e5 2. Ke3 Nc6 1-0' : '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0';
    out.push(
      `[Event "Run"]\n[Round "${i + 1}"]\n[White "W${i}"]\n[Black "B${i}"]\n[Result "1-0"]\n\n${moves}\n`,
    );
  }
  return `${out.join('\n')}\n`;
}

const PIPED = 6000;

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'kim']);
});
after(() => env?.cleanup());

async function storedGames(): Promise<number> {
  const [row] = await queryStore<{ n: number }>(
    env.databaseUrl,
    'select cast(count(*) as integer) as n from games',
  );
  return row?.n ?? 0;
}

interface Run {
  child: ChildProcess;
  input: WriteStream;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
}

/** `chessport <args>` with a named pipe among its inputs, made at `fifo`, which the caller writes to. */
function run(args: string[], fifo: string): Run {
  execFileSync('mkfifo', [fifo]);
  const spawned = spawnCli(env, args);
  const input = createWriteStream(fifo);
  input.on('error', () => undefined); // EPIPE once the import stopped reading
  return {
    child: spawned.child,
    input,
    stdout: () => spawned.output().stdout,
    stderr: () => spawned.output().stderr,
    exited: spawned.exited.then(({ code, signal }) => [code, signal]),
  };
}

/** Waits until the store holds more than `n` games, the command still running. */
async function storedMoreThan(n: number, r: Run): Promise<number> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const stored = await storedGames();
    if (stored > n) return stored;
    assert.ok(r.child.exitCode === null && Date.now() < deadline, `a batch was committed: ${r.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

type Summary = {
  file: string;
  games: number;
  imported: number;
  duplicates: number;
  rejected: number;
  rejectsFile: string | null;
};
type Document = { files: Summary[]; stopped?: { file: string; error: string } };

/** The games of a rejects file. */
function gamesIn(file: string): number {
  return readFileSync(file, 'utf8').match(/^\[Event /gm)?.length ?? 0;
}

test('SIGINT with --json: the summaries so far, "stopped", a line saying how far it got; run again, every game once', {
  timeout: 120_000,
}, async () => {
  const first = join(env.dir, 'first.pgn');
  writeFileSync(first, games(100_000, 100));
  const last = join(env.dir, 'last.pgn');
  writeFileSync(last, games(200_000, 50));
  const fifo = join(env.dir, 'games.fifo');
  const args = ['import', first, fifo, last, '--user', 'kim', '--database', 'runs', '--json'];
  const interrupted = run(args, fifo);
  interrupted.input.write(games(0, PIPED)); // and the pipe stays open: the import waits for more
  await storedMoreThan(90, interrupted);
  interrupted.child.kill('SIGINT');
  const [code, signal] = await interrupted.exited;
  assert.deepEqual([code, signal], [null, 'SIGINT'], 'it dies of the signal');
  interrupted.input.destroy();

  const line = interrupted.stderr();
  assert.match(
    line,
    /^chessport: \S*games\.fifo: the import stopped after \d+ games were imported: interrupted \(SIGINT\); run the command again to finish it: the games already stored are skipped; the file after it was not read\n$/,
  );
  const document = JSON.parse(interrupted.stdout()) as Document;
  assert.deepEqual(document.stopped, { file: fifo, error: line.slice('chessport: '.length, -1) });
  const [whole, part] = document.files;
  assert.equal(document.files.length, 2, 'the files read: the last not');
  assert.deepEqual([whole?.imported, whole?.rejected], [90, 10]);
  assert.ok(part && part.file === fifo);
  assert.equal(Number(/after (\d+) games/.exec(line)?.[1]), part.imported);
  // Every game counted is stored or rejected, and each rejected one is in the rejects file.
  assert.equal(part.games, part.imported + part.rejected);
  assert.ok(part.imported > 0 && part.games < PIPED, `part-way: ${part.games} games`);
  assert.equal(await storedGames(), 90 + part.imported);
  assert.ok(part.rejectsFile);
  assert.equal(gamesIn(part.rejectsFile), part.rejected);

  // The same command again, the pipe given all its games this time.
  rmSync(fifo);
  const rerun = run(args, fifo);
  rerun.input.end(games(0, PIPED));
  const [rerunCode] = await rerun.exited;
  assert.equal(rerunCode, 0, rerun.stderr());
  const done = JSON.parse(rerun.stdout()) as Document;
  assert.equal(done.stopped, undefined);
  assert.deepEqual(
    done.files.map((f) => [f.imported, f.duplicates, f.rejected]),
    [
      [0, 90, 10],
      [PIPED * 0.9 - part.imported, part.imported, PIPED / 10],
      [45, 0, 5],
    ],
  );
  const [counts] = await queryStore<{ games: number; uniq: number }>(
    env.databaseUrl,
    'select cast(count(*) as integer) as games, cast(count(distinct content_hash) as integer) as uniq from games',
  );
  assert.deepEqual(counts, { games: 90 + PIPED * 0.9 + 45, uniq: 90 + PIPED * 0.9 + 45 });
});

test('SIGTERM without --json: the stopped file summed up as a whole one is, naming its rejects file', {
  timeout: 60_000,
}, async () => {
  const fifo = join(env.dir, 'term.fifo');
  const before = await storedGames();
  const r = run(['import', fifo, '--user', 'kim', '--database', 'terms'], fifo);
  r.input.write(games(300_000, PIPED));
  await storedMoreThan(before, r);
  r.child.kill('SIGTERM');
  const [code, signal] = await r.exited;
  r.input.destroy();
  assert.deepEqual([code, signal], [null, 'SIGTERM']);
  assert.match(
    r.stderr(),
    /^chessport: \S*term\.fifo: the import stopped after \d+ games were imported: interrupted \(SIGTERM\); run the command again to finish it: the games already stored are skipped\n$/,
  );
  const stored = Number(/after (\d+) games/.exec(r.stderr())?.[1]);
  const rejected = Number(/(\d+) rejected/.exec(r.stdout())?.[1]);
  assert.match(
    r.stdout(),
    new RegExp(
      `^\\S*term\\.fifo: ${stored} imported, 0 duplicates skipped, ${rejected} rejected \\(${stored + rejected} games read in `,
    ),
  );
  const rejects = /rejected games written to (\S+)/.exec(r.stdout())?.[1];
  assert.ok(rejects, r.stdout());
  assert.equal(gamesIn(rejects), rejected);
  assert.match(r.stdout(), /\n {2}stopped part-way: the rest of this file was not read\n$/);
  assert.equal(await storedGames(), before + stored);
});

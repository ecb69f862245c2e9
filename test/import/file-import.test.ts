// The steps of one file's import (FileImport), each where it can be tested alone: games rejected by their
// check and unchecked keep the file's order, in the summary and in the rejects file; the summary counts what
// the store made of the games kept; an interruption mid-batch writes the games counted; the writer batches
// the games kept, also when the store fails part-way.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { CUT_NOTE, PgnSplitter } from '../../src/chess/index.ts';
import { BatchWriter } from '../../src/import/batch-writer.ts';
import { FileImport, importFile } from '../../src/import/import-file.ts';
import type { BatchItem } from '../../src/import/normalize-batch.ts';
import { checkBatch } from '../../src/import/normalize-batch.ts';
import { NormalizePool } from '../../src/import/normalize-pool.ts';
import { ImportFailure, ImportInterrupted, type ImportSummary } from '../../src/import/summary.ts';
import type { Database, GameRecord, Store } from '../../src/store/index.ts';
import { openTestStore, type TestStore } from '../helpers/dialects.ts';
import { STORE_DIALECT } from '../helpers/stores.ts';

const tags = (n: number, result = '1-0') =>
  `[Event "Steps"]\n[Round "${n}"]\n[White "White ${n}"]\n[Black "Black ${n}"]\n[Result "${result}"]\n\n`;
/** Game `n`, kept as written. */
const good = (n: number) => `${tags(n)}1. e4 e5 2. Nf3 Nc6 1-0\n`;
/** Game `n`, rejected by its check: an illegal move. */
const illegal = (n: number) => `${tags(n)}1. e4 e5 2. Ke3 1-0\n`;
/** Game `n`, kept with a warning: no result terminator. */
const unended = (n: number) => `${tags(n, '*')}1. e4 e5\n`;
/** Game `n` as a rejects file keeps one too large to check: cut short, rejected unchecked. */
const cut = (n: number) =>
  `${tags(n)}1. e4 e5 2. Nf3\n${CUT_NOTE}: 10 more bytes of this game are left out\n`;
/** Game `n` with a comment of `chars` characters. */
const long = (n: number, chars: number) => `${tags(n)}1. e4 {${'x'.repeat(chars)}} e5 1-0\n`;

/** Games as a file holds them: a blank line between two. */
const pgn = (games: string[]) => games.join('\n');

/** The Round of each game written, per store transaction. */
function spyInserts(store: Store, fail?: (call: number) => Error | undefined): number[][] {
  const calls: number[][] = [];
  const insert = store.games.insert.bind(store.games);
  store.games.insert = async (database: Database, games: GameRecord[], allowDuplicates?: boolean) => {
    const error = fail?.(calls.length + 1);
    if (error) throw error;
    calls.push(games.map((game) => Number(game.metadata.Round)));
    return insert(database, games, allowDuplicates);
  };
  return calls;
}

let t: TestStore;
let dir: string;
let owner: string;
let databases = 0;

before(async () => {
  t = await openTestStore(STORE_DIALECT);
  dir = mkdtempSync(join(tmpdir(), 'chessport-steps-'));
  owner = (await t.store.accounts.addUser({ login: 'pat' })).id;
});

after(async () => {
  await t.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A new database, and a file of `games` to import into it. */
async function setUp(
  games: string[],
  options: { maxGames?: number } = {},
): Promise<{ database: Database; file: string; rejectsFile: string }> {
  const n = ++databases;
  const database = await t.store.databases.add({ ownerId: owner, name: `Steps ${n}`, ...options });
  const file = join(dir, `steps-${n}.pgn`);
  writeFileSync(file, pgn(games));
  return { database, file, rejectsFile: join(dir, `steps-${n}.rejected.pgn`) };
}

test('games rejected by their check and unchecked are counted, and written, in the order of the file', async () => {
  const games = [good(1), illegal(2), cut(3), good(4), long(5, 5000), good(6)];
  const { database, file, rejectsFile } = await setUp(games);
  // A worker: the results of the chunk of the illegal game come back while the cut game is already split.
  const pool = new NormalizePool(1);
  try {
    const job = await FileImport.open({
      store: t.store,
      database,
      file,
      pool,
      rejectsFile,
      maxGameSize: 2000,
    });
    const splitter = new PgnSplitter({ maxGameChars: 2000 });
    await job.submit(splitter.push(pgn(games)));
    await job.submit(splitter.end());
    await job.finish();
    await job.close();
    const summary = job.summarise();
    assert.deepEqual(
      [summary.games, summary.imported, summary.rejected, summary.rejectsFile],
      [6, 3, 3, rejectsFile],
    );
    assert.deepEqual(
      summary.rejections.map(({ game, line }) => ({ game, line })),
      [
        { game: 2, line: 9 },
        { game: 3, line: 17 },
        { game: 5, line: 34 },
      ],
    );
    const [illegalReason, cutReason, longReason] = summary.rejections.map((r) => r.reason);
    assert.match(illegalReason ?? '', /^illegal move 2\.Ke3/);
    assert.match(cutReason ?? '', /^the game was cut short in a rejects file.*its line 24 says so/);
    assert.match(
      longReason ?? '',
      /^the game is 5,\d{3} characters long, more than the largest game the import checks \(2,000 characters; --max-game-size sets it\)$/,
    );
    // Each rejected game whole (the long one is under the MB a rejects file keeps), and a blank line after it.
    assert.equal(readFileSync(rejectsFile, 'utf8'), `${illegal(2)}\n${cut(3)}\n${long(5, 5000)}\n`);
    assert.deepEqual(
      (await t.store.games.listInDatabase(database.id, { limit: 10, offset: 0 }))
        .map((g) => g.white.name)
        .sort(),
      ['White 1', 'White 4', 'White 6'],
    );
  } finally {
    await pool.close();
  }
});

test("the summary: what the store made of the games kept, the warnings, the file's bytes", async () => {
  const games = [good(1), unended(2), illegal(3), good(4), good(5)];
  const { database, file, rejectsFile } = await setUp(games);
  const options = { store: t.store, database, file, workers: 0, rejectsFile };
  const first = await importFile(options);
  assert.deepEqual(withoutTime(first), {
    file,
    games: 5,
    imported: 4,
    duplicates: 0,
    rejected: 1,
    overLimit: 0,
    stoppedAtMaxGames: false,
    rejections: [{ file, line: 17, game: 3, reason: 'illegal move 2.Ke3 (ply 3, line 23)' }],
    rejectsFile,
    warnings: [
      { file, line: 9, game: 2, warning: 'no result terminator after the moves: the game may be cut off' },
    ],
    bytes: Buffer.byteLength(pgn(games)),
  });
  // The same file again: its games are in the database already.
  const again = await importFile(options);
  assert.deepEqual([again.games, again.imported, again.duplicates, again.rejected], [5, 0, 4, 1]);
  // Into a database of at most 2 games: the import stops there.
  const small = await setUp(games, { maxGames: 2 });
  const full = await importFile({ ...options, ...small });
  assert.deepEqual([full.imported, full.overLimit, full.stoppedAtMaxGames], [2, 2, true]);
  assert.equal(await t.store.databases.countGames(small.database.id), 2);
});

test('an interruption mid-batch: the games counted are written, those of the batch too, then the import stops', async () => {
  const games = Array.from({ length: 2000 }, (_, i) => (i === 9 ? illegal(i + 1) : good(i + 1)));
  const { database, file, rejectsFile } = await setUp(games);
  const inserts = spyInserts(t.store);
  const controller = new AbortController();
  try {
    // Stopped at the first progress with games checked: the batch of 5,000 holds them, none written yet.
    const stopped = await importFile({
      store: t.store,
      database,
      file,
      workers: 0,
      rejectsFile,
      signal: controller.signal,
      onProgress: (progress) => {
        if (progress.games > 0) controller.abort();
      },
    }).then(
      () => assert.fail('the import went on to its end'),
      (error: unknown) => error,
    );
    assert.ok(stopped instanceof ImportFailure, String(stopped));
    assert.ok(stopped.cause instanceof ImportInterrupted);
    const { summary } = stopped;
    assert.ok(summary.games > 10 && summary.games < games.length, `${summary.games} games`);
    assert.deepEqual([summary.imported, summary.rejected], [summary.games - 1, 1]);
    assert.deepEqual(inserts.length, 1, 'the batch is written in one transaction');
    assert.equal(await t.store.databases.countGames(database.id), summary.imported);
    assert.equal(readFileSync(rejectsFile, 'utf8'), `${illegal(10)}\n`);
  } finally {
    // @ts-expect-error: the spy is an own property of store.games; the class's method is back without it.
    delete t.store.games.insert;
  }
});

test('the writer: each batch in one transaction, in file order, and a failing store stops the import', async () => {
  const games = Array.from({ length: 250 }, (_, i) => good(i + 1));
  const { database, file, rejectsFile } = await setUp(games);
  try {
    const inserts = spyInserts(t.store, (call) => (call === 2 ? new Error('the disk is full') : undefined));
    const stopped = await importFile({
      store: t.store,
      database,
      file,
      workers: 0,
      rejectsFile,
      batchSize: 100,
    })
      .then(() => assert.fail('the import went on to its end'))
      .catch((error: unknown) => error);
    assert.ok(stopped instanceof ImportFailure, String(stopped));
    assert.equal((stopped.cause as Error).message, 'the disk is full');
    // The first batch is committed; the second fails, and no other is tried.
    assert.deepEqual(inserts, [Array.from({ length: 100 }, (_, i) => i + 1)]);
    assert.equal(stopped.summary.imported, 100);
    assert.equal(await t.store.databases.countGames(database.id), 100);
  } finally {
    // @ts-expect-error: as above
    delete t.store.games.insert;
  }
  // Again, the store working: the first 100 are skipped, the rest written in batches of 100 at most.
  const inserts = spyInserts(t.store);
  try {
    const summary = await importFile({
      store: t.store,
      database,
      file,
      workers: 0,
      rejectsFile,
      batchSize: 100,
    });
    assert.deepEqual([summary.imported, summary.duplicates], [150, 100]);
    assert.deepEqual(
      inserts.flat(),
      Array.from({ length: 250 }, (_, i) => i + 1),
    );
    assert.ok(
      inserts.every((batch) => batch.length <= 100),
      inserts.map((b) => b.length).join(),
    );
  } finally {
    // @ts-expect-error: as above
    delete t.store.games.insert;
  }
});

test('the batch writer alone: full batches at once, an early write only of a batch worth it', async () => {
  const database = await t.store.databases.add({ ownerId: owner, name: 'Writer' });
  const records = checkBatch(Array.from({ length: 30 }, (_, i) => good(i + 1))).items.filter(
    (item: BatchItem): item is GameRecord => typeof item !== 'string',
  );
  const inserts = spyInserts(t.store);
  try {
    const writer = new BatchWriter({ store: t.store, database, batchSize: 10, textBytes: 0 });
    for (const record of records.slice(0, 9)) await writer.add(record);
    await writer.flushEarly(); // 9 games: less than a batch, not worth a transaction of its own
    assert.deepEqual(inserts, []);
    await writer.add(records[9] as GameRecord); // the 10th: a full batch
    assert.deepEqual(inserts, [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]]);
    for (const record of records.slice(10, 15)) await writer.add(record);
    await writer.flush();
    for (const record of records.slice(15, 17)) await writer.add(record);
    await writer.end(); // a batch not flushed is dropped
    assert.deepEqual(inserts.slice(1), [[11, 12, 13, 14, 15]]);
    assert.deepEqual([writer.imported, writer.duplicates, writer.overLimit], [15, 0, 0]);
    assert.equal(await t.store.databases.countGames(database.id), 15);
  } finally {
    // @ts-expect-error: as above
    delete t.store.games.insert;
  }
});

test('an input that is not there: the import fails at its first step, and writes nothing', async () => {
  const { database, rejectsFile } = await setUp([]);
  const file = join(dir, 'missing.pgn');
  await assert.rejects(FileImport.open({ store: t.store, database, file, workers: 0, rejectsFile }), {
    code: 'ENOENT',
  });
  await assert.rejects(importFile({ store: t.store, database, file, workers: 0, rejectsFile }), {
    code: 'ENOENT',
  });
  assert.throws(() => readFileSync(rejectsFile), { code: 'ENOENT' });
});

function withoutTime(summary: ImportSummary): Omit<ImportSummary, 'seconds'> {
  const { seconds, ...rest } = summary;
  assert.ok(seconds >= 0);
  return rest;
}

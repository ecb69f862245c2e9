// One PGN file into one database: streamed, validated game by game, written in batched transactions.
// A bad game never stops the rest: it is reported and its original text goes to the rejects file.
import { stat } from 'node:fs/promises';
import { PgnSplitter } from '../chess/index.ts';
import type { RawGame } from '../chess/types.ts';
import type { Database, GameRecord, Store } from '../store/index.ts';
import { decodePgnStream } from './decode.ts';
import { InputReadError, inputBytes, textSize } from './input.ts';
import type { BatchItem, CheckedBatch } from './normalize-batch.ts';
import { defaultPoolSize, maxPoolSize, NormalizePool, worthWorkers } from './normalize-pool.ts';
import { RejectsFiles, RejectsWriter } from './rejects.ts';

// Per message to a worker, at most so many games and so much text: enough that messaging costs little, little
// enough that the work spreads evenly over the workers (a TCEC game with engine comments is 36 KB).
const CHUNK_GAMES = 250;
const CHUNK_CHARS = 256 * 1024;
// Text in chunks sent and not yet taken back, at most: enough that the workers never run dry while this
// thread writes a batch (5,000 short games take it ~100 ms), and a bound on memory however large the file.
const IN_FLIGHT_CHARS = 16 << 20;
const IN_FLIGHT_CHUNKS_PER_WORKER = 32;
// Per store transaction, at most so many games and so much PGN. Each commit rewrites the index pages its rows
// touched, and the dedup index takes random keys: 5,000 rows per commit cost a fifth less than 1,000
// (measured; 20,000 no less than 5,000 since migration 0003 shrank that index); the text bound keeps memory
// flat on comment-heavy files. While the workers are still busy, smaller batches (from MIN_BATCH) are written
// at once: that time would be idle anyway, and less is left to write after the last game.
const BATCH_GAMES = 5000;
const BATCH_CHARS = 8 << 20;
const MIN_BATCH = 2000;
// Inputs from this size on are written with checkpoints on a thread of their own (store.bulkWrites). Below
// it, that thread's start-up and its repeated copies of the same index pages cost more than the writer's
// own checkpoints, which smaller imports seldom reach (measured on 2 cores, alternating runs: a 4 MB TCEC
// event 0.20 -> 0.18 s without it, a TWIC issue 0.33 -> 0.31 s, 8 MB of short games 0.70 and 0.72 s; 44 MB
// of TCEC games 0.59 -> 0.53 s with it).
const BULK_WRITES_BYTES = 8 << 20;
// Another worker is started when, over half a second of the import, the main thread spent more than a
// third of it waiting for results, and the rest of the file would still take this long at the speed so far:
// its start-up and warm-up (~0.2 s of CPU) pay off only over a long run (measured on 2 cores: 100 MB of
// pgnmentor games 20 s -> 15 s with a second worker; 44 MB of TCEC games, 1 s, and 8 MB of short games,
// whose writes keep the main thread busy, got slower). The first window starts after the workers' start-up.
const GROW_WINDOW_MS = 500;
const GROW_WHEN_SECONDS_LEFT = 3;

export interface Rejection {
  file: string;
  line: number;
  game: number;
  reason: string;
}

/**
 * Something about a game that was kept but not as written: a variation cut at a bad move, a repeated tag,
 * moves without a result terminator (normalizeGame).
 */
export interface ImportWarning {
  file: string;
  line: number;
  game: number;
  warning: string;
}

export interface ImportProgress {
  file: string;
  /** Games checked so far (imported, duplicates, rejected, or in the batch being written). */
  games: number;
  /**
   * Bytes of the file those games came from (compressed ones, for a .gz), estimated from the text checked. Not
   * the bytes read: the file is read up to 16 MB ahead of the checking, so that a file of that size showed all
   * its bytes done, and an ETA of 0 s, while its first games were checked.
   */
  bytes: number;
  /** The input's size; 0 for a pipe. */
  totalBytes: number;
}

export interface ImportSummary {
  file: string;
  games: number;
  imported: number;
  duplicates: number;
  rejected: number;
  /** Games not added because the database reached maxGames; the import stopped there. */
  overLimit: number;
  stoppedAtMaxGames: boolean;
  rejections: Rejection[];
  rejectsFile: string | null;
  /** Per kept game, what was not kept as written (ImportWarning); reported as rejections are. */
  warnings: ImportWarning[];
  bytes: number;
  seconds: number;
}

export interface ImportOptions {
  store: Store;
  database: Database;
  file: string;
  allowDuplicates?: boolean;
  /**
   * Where rejected games go, or fail to (no other place is tried); default `<file>.rejected.pgn`, or a free
   * name beside it or in the working folder (RejectsFiles.open).
   */
  rejectsFile?: string;
  /**
   * The rejects files of the caller's whole run, shared by the imports of its inputs (the CLI imports several
   * files in one command): none is written, and a named rejects file collects them all. Default: this import's.
   */
  rejects?: RejectsFiles;
  /** Most games per store transaction (default 5,000). */
  batchSize?: number;
  /**
   * Worker threads that normalise games; default one per core but one, none for files small or quick to check
   * (worthWorkers: their start-up costs more than they save).
   */
  workers?: number;
  /**
   * Workers shared with the imports of other files (poolForFiles), used for this file whatever its size and
   * left running for the caller to close; by default the import starts its own and stops them at its end.
   */
  pool?: NormalizePool;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Stops the import at its next game (SIGINT): it writes the games it checked (the last batch included) and
   * their rejects, then throws an ImportFailure whose cause is an ImportInterrupted.
   */
  signal?: AbortSignal;
}

/** The cause of an ImportFailure when the import was stopped through its signal. */
export class ImportInterrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/**
 * A copy of a reason or warning that keeps nothing else alive: split from a batch's packed results, it was a
 * view of the whole batch's text, which the summary then held (382k warnings: 0.6 GB more memory).
 */
function detached(text: string): string {
  return ` ${text}`.slice(1);
}

/** The summary of a file before any of it is read. */
export function emptySummary(file: string): ImportSummary {
  return {
    file,
    games: 0,
    imported: 0,
    duplicates: 0,
    rejected: 0,
    overLimit: 0,
    stoppedAtMaxGames: false,
    rejections: [],
    rejectsFile: null,
    warnings: [],
    bytes: 0,
    seconds: 0,
  };
}

export async function importFile(options: ImportOptions): Promise<ImportSummary> {
  const { store, database, file } = options;
  const started = performance.now();
  const stats = await stat(file);
  const totalBytes = stats.size;
  // What the decisions by size go by: a compressed file of a few MB holds several times as much text.
  const textBytes = stats.isFile() ? (await textSize(file, 0)).size : totalBytes;
  const batchSize = options.batchSize ?? BATCH_GAMES;
  const rejects = new RejectsWriter(options.rejects ?? new RejectsFiles([file]), file, options.rejectsFile);
  const summary = emptySummary(file);
  const bulk = textBytes < BULK_WRITES_BYTES ? undefined : store.bulkWrites();
  let batch: GameRecord[] = [];
  let batchChars = 0;
  const pool =
    options.pool ??
    new NormalizePool(options.workers ?? ((await worthWorkers([file])) ? defaultPoolSize() : 0));
  const maxWorkers = options.workers ?? maxPoolSize();
  /** Text of the games taken back from the workers, and this thread's waits for them since windowStart. */
  let doneChars = 0;
  let windowStart = -1;
  let waited = 0;
  /** Starts another worker while checking games, not this thread, is the slow part of a long import. */
  const maybeGrow = () => {
    const now = performance.now();
    if (windowStart < 0 || pool.size === 0 || pool.size >= maxWorkers) return;
    if (now - windowStart < GROW_WINDOW_MS) return;
    const waiting = waited / (now - windowStart);
    windowStart = now;
    waited = 0;
    const secondsLeft = ((textBytes - doneChars) / doneChars) * ((now - started) / 1000); // chars ~ bytes
    if (waiting > 1 / 3 && secondsLeft > GROW_WHEN_SECONDS_LEFT) pool.grow();
  };
  // Chunks in flight, oldest first: results are taken in file order.
  const inFlight: { raws: RawGame[]; chars: number; checked: Promise<CheckedBatch>; ready: boolean }[] = [];
  let inFlightChars = 0;
  let chunk: RawGame[] = [];
  let chunkChars = 0;
  /**
   * For progress: the bytes of the file read (compressed ones, for a .gz), those the input gave (decompressed),
   * those decoded into text, and that text's length.
   */
  let readBytes = 0;
  let givenBytes = 0;
  let decodedBytes = 0;
  let readChars = 0;
  let shownBytes = 0;
  const progress = () => {
    if (!options.onProgress || readChars === 0) return;
    // The bytes of the file behind the games checked: the text checked, in bytes of the file. Never less than
    // shown before (the proportions vary along a file), nor more than read.
    const bytes = Math.round(
      ((decodedBytes * doneChars) / readChars) * (readBytes / Math.max(1, givenBytes)),
    );
    shownBytes = Math.max(shownBytes, Math.min(bytes, readBytes));
    options.onProgress({ file, games: summary.games, bytes: shownBytes, totalBytes });
  };
  /** Stops at a point where every game counted is in the batch, stored, or rejected and in the rejects file. */
  const checkpoint = () => {
    if (options.signal?.aborted) throw new ImportInterrupted();
  };

  const flush = async () => {
    if (batch.length === 0) return;
    await bulk?.ready();
    const outcome = await store.insertGames(database, batch, options.allowDuplicates);
    bulk?.committed();
    summary.imported += outcome.inserted;
    summary.duplicates += outcome.duplicates;
    summary.overLimit += outcome.overLimit;
    if (outcome.overLimit > 0) summary.stoppedAtMaxGames = true;
    batch = [];
    batchChars = 0;
  };

  const settleOldest = async () => {
    const oldest = inFlight.shift();
    if (!oldest) return;
    inFlightChars -= oldest.chars;
    doneChars += oldest.chars;
    if (!oldest.ready && batch.length >= Math.min(MIN_BATCH, batchSize)) await flush();
    if (!oldest.ready) {
      const since = performance.now();
      await oldest.checked;
      // The first results take the workers' start-up and warm-up: the window opens after them.
      if (windowStart < 0) windowStart = performance.now();
      else waited += performance.now() - since;
      maybeGrow();
    }
    const { items, warnings } = await oldest.checked;
    for (const { index, warning } of warnings) {
      const raw = oldest.raws[index] as RawGame;
      summary.warnings.push({ file, line: raw.line, game: raw.index, warning: detached(warning) });
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as BatchItem;
      summary.games++;
      if (typeof item !== 'string') {
        batch.push(item);
        batchChars += item.pgn.length;
        if (batch.length >= batchSize || batchChars >= BATCH_CHARS) await flush();
        continue;
      }
      const raw = oldest.raws[i] as RawGame;
      summary.rejected++;
      summary.rejections.push({ file, line: raw.line, game: raw.index, reason: detached(item) });
      await rejects.write(raw.text);
    }
  };

  const submit = async () => {
    if (chunk.length === 0) return;
    const checked = pool.run(
      chunk.map((r) => r.text),
      chunk.map((r) => r.line),
    );
    const entry = { raws: chunk, chars: chunkChars, checked, ready: false };
    entry.checked.then(
      () => {
        entry.ready = true;
      },
      () => undefined, // the rejection reaches settleOldest, which awaits it
    );
    inFlight.push(entry);
    inFlightChars += chunkChars;
    chunk = [];
    chunkChars = 0;
    const maxInFlight = Math.max(1, pool.size * IN_FLIGHT_CHUNKS_PER_WORKER);
    while (inFlight.length >= maxInFlight || inFlightChars >= IN_FLIGHT_CHARS) {
      await settleOldest();
      progress();
      checkpoint();
    }
  };

  /** Adds a game to the chunk; true when the chunk is full and is to be submitted. */
  const take = (raw: RawGame): boolean => {
    chunk.push(raw);
    chunkChars += raw.text.length;
    return chunk.length >= CHUNK_GAMES || chunkChars >= CHUNK_CHARS;
  };

  const input = inputBytes(
    file,
    (bytes) => {
      readBytes = bytes;
      summary.bytes = bytes;
    },
    options.signal,
  );
  /** The input's bytes, counted. */
  async function* given(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const bytes of source) {
      givenBytes += bytes.length;
      yield bytes;
    }
  }
  const splitter = new PgnSplitter();
  /** The first failure: the store's, the rejects file's, or of the input. What is closed after must not hide it. */
  let failure: { error: unknown } | undefined;
  try {
    checkpoint();
    for await (const text of decodePgnStream(given(input), (bytes) => (decodedBytes += bytes))) {
      readChars += text.length;
      // An await per game would cost a turn of the microtask queue each: only a full chunk waits.
      for (const raw of splitter.push(text)) if (take(raw)) await submit();
      progress();
      checkpoint();
      if (summary.stoppedAtMaxGames) break;
    }
    if (!summary.stoppedAtMaxGames) for (const raw of splitter.end()) if (take(raw)) await submit();
    await submit();
    while (inFlight.length > 0) {
      await settleOldest();
      progress();
      checkpoint();
    }
    await flush();
  } catch (error) {
    // Reading stopped through the signal (AbortError) is an interruption too.
    const interrupted = options.signal?.aborted && (error instanceof ImportInterrupted || isAbort(error));
    failure = { error: interrupted ? new ImportInterrupted() : error };
    // What was counted is written: the games checked are stored, as their rejects are in the rejects file.
    if (interrupted) await flush().catch((error: unknown) => (failure = { error }));
    // A .gz file cut off or damaged: the games before the damage are imported, as those of a PGN file cut off.
    else if (error instanceof InputReadError) {
      await (async () => {
        await submit();
        while (inFlight.length > 0) await settleOldest();
        await flush();
      })().catch((error: unknown) => (failure = { error }));
    }
  }
  await input.return(undefined).catch(() => undefined);
  const closing: (() => Promise<unknown>)[] = [
    async () => {
      if (!options.pool) await pool.close();
    },
    async () => bulk?.end(),
    async () => {
      summary.rejectsFile = await rejects.close();
    },
  ];
  for (const close of closing) await close().catch((error: unknown) => (failure ??= { error }));
  summary.seconds = (performance.now() - started) / 1000;
  if (failure) throw new ImportFailure(summary, failure.error);
  return summary;
}

function isAbort(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'AbortError';
}

/**
 * An import that stopped part-way: its cause, and what it had done by then (`summary`: the games of the
 * batches committed, which a second run of the same import skips as duplicates).
 */
export class ImportFailure extends Error {
  readonly summary: ImportSummary;

  constructor(summary: ImportSummary, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.summary = summary;
  }
}

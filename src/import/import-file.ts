// One PGN file into one database: streamed, validated game by game, written in batched transactions.
// A bad game never stops the rest: it is reported and its original text goes to the rejects file.
import { stat } from 'node:fs/promises';
import { PgnSplitter } from '../chess/index.ts';
import type { RawGame } from '../chess/types.ts';
import type { Database, Store } from '../store/index.ts';
import { BatchWriter } from './batch-writer.ts';
import { CheckingQueue } from './checking-queue.ts';
import { decodePgnStream } from './decode.ts';
import { InputReadError, inputBytes, textSize } from './input.ts';
import type { BatchItem } from './normalize-batch.ts';
import { defaultPoolSize, maxPoolSize, NormalizePool, worthWorkers } from './normalize-pool.ts';
import { type ImportProgress, ProgressMeter } from './progress.ts';
import { OVERSIZE_KEPT_BYTES, RejectsFiles, RejectsWriter } from './rejects.ts';
import { WorkerGrowth } from './worker-growth.ts';

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
   * The largest game checked, in characters of text (default DEFAULT_MAX_GAME_SIZE): a larger one is rejected
   * for its size as it is read, unchecked and never held whole, and the import goes on; so is one with a line
   * of more bytes, which is never held whole either.
   */
  maxGameSize?: number;
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

/**
 * The default largest game: the largest real games (engine games with an analysis on every move) are a few
 * hundred KB. Checking a game holds several times its size (docs/performance.md), so a game of hundreds of MB
 * would exhaust the process's memory.
 */
export const DEFAULT_MAX_GAME_SIZE = 32 * 1024 * 1024;

const MB = 1024 * 1024;

/** Why a game larger than the limit is rejected: its length, or that of a line too long to read (LongLine). */
function tooLarge(raw: RawGame, max: number): string {
  const size = (n: number) => (n % MB === 0 ? `${n / MB} MB` : `${n.toLocaleString('en-US')} characters`);
  const what = raw.longLine
    ? `line ${raw.longLine.line} is ${raw.longLine.bytes.toLocaleString('en-US')} bytes long`
    : `the game is ${(raw.oversize ?? 0).toLocaleString('en-US')} characters long`;
  return `${what}, more than the largest game the import checks (${size(max)}; --max-game-size sets it)`;
}

/** Why a game that a rejects file kept only the first part of (RawGame.cut) is rejected. */
function cutShort(raw: RawGame): string {
  return `the game was cut short in a rejects file, which kept only its first part (its line ${raw.cut} says so)`;
}

/** The cause of an ImportFailure when the import was stopped through its signal. */
export class ImportInterrupted extends Error {
  constructor() {
    super('interrupted');
  }
}

/**
 * A copy of a reason or warning that keeps nothing else alive: split from a batch's packed results, it is a
 * view of the whole batch's text, which the summary would otherwise keep (docs/performance.md).
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
  const { file } = options;
  const started = performance.now();
  const stats = await stat(file);
  // What the decisions by size go by: a compressed file of a few MB holds several times as much text.
  const textBytes = stats.isFile() ? (await textSize(file, 0)).size : stats.size;
  const rejects = new RejectsWriter(options.rejects ?? new RejectsFiles([file]), file, options.rejectsFile);
  const summary = emptySummary(file);
  const writer = new BatchWriter({
    store: options.store,
    database: options.database,
    allowDuplicates: options.allowDuplicates,
    batchSize: options.batchSize,
    textBytes,
  });
  const pool =
    options.pool ??
    new NormalizePool(options.workers ?? ((await worthWorkers([file])) ? defaultPoolSize() : 0));
  const growth = new WorkerGrowth(pool, options.workers ?? maxPoolSize(), textBytes, started);
  const queue = new CheckingQueue(pool);
  const progress = new ProgressMeter(file, stats.size, options.onProgress);
  /** Stops at a point where every game counted is in the batch, stored, or rejected and in the rejects file. */
  const checkpoint = () => {
    if (options.signal?.aborted) throw new ImportInterrupted();
  };

  /** Takes the results of the oldest chunk sent: its games go to the batch, or rejected to the rejects file. */
  const takeOldest = async () => {
    const oldest = queue.takeOldest();
    if (!oldest) return;
    // Waiting for the workers, the batch so far is written; whether it came meanwhile is asked again.
    if (!oldest.ready) await writer.flushEarly();
    if (!oldest.ready) await growth.wait(oldest.checked, queue.takenChars);
    const { items, warnings } = await oldest.checked;
    for (const { index, warning } of warnings) {
      const raw = oldest.raws[index] as RawGame;
      summary.warnings.push({ file, line: raw.line, game: raw.index, warning: detached(warning) });
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as BatchItem;
      summary.games++;
      if (typeof item !== 'string') {
        await writer.add(item);
        continue;
      }
      const raw = oldest.raws[i] as RawGame;
      summary.rejected++;
      summary.rejections.push({ file, line: raw.line, game: raw.index, reason: detached(item) });
      await rejects.write(raw.text);
    }
  };
  /** Takes the results of the oldest chunks, reporting progress, until `until` holds. */
  const takeUntil = async (until: () => boolean) => {
    while (!until()) {
      await takeOldest();
      progress.report(summary.games, queue.takenChars);
      checkpoint();
    }
  };
  /** Sends the chunk gathered, then takes results back while as much is sent as may be. */
  const send = async () => {
    if (queue.send()) await takeUntil(() => !queue.full);
  };
  const maxGameSize = options.maxGameSize ?? DEFAULT_MAX_GAME_SIZE;
  /**
   * A game rejected unchecked: a piece of one larger than maxGameSize (RawGame.part, oversize), or one cut
   * short in a rejects file (RawGame.cut). Straight to the rejects file, once every game before it has been
   * taken back from the workers (so the rejects file keeps the file's order); a game too large only its
   * first part, and its last piece counts it as rejected.
   */
  const unchecked = async (raw: RawGame) => {
    await send();
    await takeUntil(() => queue.empty);
    const oversize = raw.part || raw.oversize !== undefined;
    if (oversize) await rejects.writeOversize(raw.text, raw.part !== true, raw.dropped);
    else await rejects.write(raw.text);
    if (raw.part) return;
    summary.games++;
    summary.rejected++;
    summary.rejections.push({
      file,
      line: raw.line,
      game: raw.index,
      reason: oversize ? tooLarge(raw, maxGameSize) : cutShort(raw),
    });
  };
  /** Takes the splitter's games: to the workers, or one rejected unchecked to the rejects file. */
  const take = async (raws: RawGame[]) => {
    for (const raw of raws) {
      if (raw.part || raw.oversize !== undefined || raw.cut !== undefined) await unchecked(raw);
      // An await per game would cost a turn of the microtask queue each: only a full chunk waits.
      else if (queue.add(raw)) await send();
    }
  };

  const input = inputBytes(
    file,
    (bytes) => {
      progress.read(bytes);
      summary.bytes = bytes;
    },
    options.signal,
  );
  const splitter = new PgnSplitter({ maxGameChars: maxGameSize });
  /** The first failure: the store's, the rejects file's, or of the input. What is closed after must not hide it. */
  let failure: { error: unknown } | undefined;
  try {
    checkpoint();
    // A line past the largest game is never held whole: its game is too large anyway.
    const texts = decodePgnStream(progress.given(input), (bytes) => progress.decoded(bytes), {
      maxLineBytes: maxGameSize,
      headBytes: OVERSIZE_KEPT_BYTES,
    });
    for await (const text of texts) {
      progress.text(typeof text === 'string' ? text.length : text.head.length + text.dropped);
      await take(splitter.push(text));
      progress.report(summary.games, queue.takenChars);
      checkpoint();
      if (writer.stoppedAtMaxGames) break;
    }
    if (!writer.stoppedAtMaxGames) await take(splitter.end());
    await send();
    await takeUntil(() => queue.empty);
    await writer.flush();
  } catch (error) {
    // Reading stopped through the signal (AbortError) is an interruption too.
    const interrupted = options.signal?.aborted && (error instanceof ImportInterrupted || isAbort(error));
    failure = { error: interrupted ? new ImportInterrupted() : error };
    // What was counted is written: the games checked are stored, as their rejects are in the rejects file.
    if (interrupted) await writer.flush().catch((error: unknown) => (failure = { error }));
    // A .gz file cut off or damaged: the games before the damage are imported, as those of a PGN file cut off.
    else if (error instanceof InputReadError) {
      await (async () => {
        await send();
        while (!queue.empty) await takeOldest();
        await writer.flush();
      })().catch((error: unknown) => (failure = { error }));
    }
  }
  await input.return(undefined).catch(() => undefined);
  const closing: (() => Promise<unknown>)[] = [
    async () => {
      if (!options.pool) await pool.close();
    },
    async () => writer.end(),
    async () => {
      summary.rejectsFile = await rejects.close();
    },
  ];
  for (const close of closing) await close().catch((error: unknown) => (failure ??= { error }));
  summary.imported = writer.imported;
  summary.duplicates = writer.duplicates;
  summary.overLimit = writer.overLimit;
  summary.stoppedAtMaxGames = writer.stoppedAtMaxGames;
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

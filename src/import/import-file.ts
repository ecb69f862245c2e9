// One PGN file into one database: streamed, validated game by game, written in batched transactions.
// A bad game never stops the rest: it is reported and its original text goes to the rejects file. FileImport
// holds the parts of one file's import and the state its steps share; importFile runs the steps in turn.
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
import { emptySummary, ImportFailure, ImportInterrupted, type ImportSummary } from './summary.ts';
import { WorkerGrowth } from './worker-growth.ts';

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

/**
 * A copy of a reason or warning that keeps nothing else alive: split from a batch's packed results, it is a
 * view of the whole batch's text, which the summary would otherwise keep (docs/performance.md).
 */
function detached(text: string): string {
  return ` ${text}`.slice(1);
}

/** Whether reading stopped through the signal: the input's stream is destroyed with an AbortError. */
function isAbort(error: unknown): boolean {
  return (error as { name?: unknown } | null)?.name === 'AbortError';
}

/** The file's import: its options; what open() found of the input; the workers that check its games. */
interface Opened {
  options: ImportOptions;
  /** When the import started (performance.now()). */
  started: number;
  /** The file's size; 0 for a pipe. */
  size: number;
  /** Its size in text, which the decisions by size go by. */
  textBytes: number;
  pool: NormalizePool;
}

/**
 * The import of one file, in steps that share its state (docs/architecture.md#the-import-pipeline): `open`
 * sizes the input and sets up the parts; `read` decodes the input and splits it into games, which `submit`
 * gathers into chunks for checking or, a game not to be checked, hands to `rejectUnchecked`; `takeResults`
 * takes the oldest chunk's results back, its games to the writer or to the rejects file; `finish` takes the
 * rest back and writes the last batch; `stop`, after a failure or an interruption, writes what was counted;
 * `close` closes the parts; `summarise` says what the import did, or throws the ImportFailure that says it.
 * `run` is the steps in turn; a test can call each alone.
 */
export class FileImport {
  private readonly options: ImportOptions;
  private readonly file: string;
  private readonly started: number;
  private readonly maxGameSize: number;
  private readonly summary: ImportSummary;
  private readonly rejects: RejectsWriter;
  private readonly writer: BatchWriter;
  private readonly pool: NormalizePool;
  private readonly growth: WorkerGrowth;
  private readonly queue: CheckingQueue;
  private readonly progress: ProgressMeter;
  /** The input's bytes, once read() has started. */
  private input: AsyncGenerator<Buffer> | undefined;
  /** The first failure: the store's, the rejects file's, or of the input. What is closed after must not hide it. */
  private failure: { error: unknown } | undefined;

  /**
   * The first step: the input's size, and its size in text (what the decisions by size go by: a compressed
   * file of a few MB holds several times as much text); the workers, unless the options name a pool.
   */
  static async open(options: ImportOptions): Promise<FileImport> {
    const started = performance.now();
    const stats = await stat(options.file);
    const textBytes = stats.isFile() ? (await textSize(options.file, 0)).size : stats.size;
    const pool =
      options.pool ??
      new NormalizePool(options.workers ?? ((await worthWorkers([options.file])) ? defaultPoolSize() : 0));
    return new FileImport({ options, started, size: stats.size, textBytes, pool });
  }

  private constructor({ options, started, size, textBytes, pool }: Opened) {
    this.options = options;
    this.file = options.file;
    this.started = started;
    this.maxGameSize = options.maxGameSize ?? DEFAULT_MAX_GAME_SIZE;
    this.summary = emptySummary(options.file);
    this.rejects = new RejectsWriter(
      options.rejects ?? new RejectsFiles([options.file]),
      options.file,
      options.rejectsFile,
    );
    this.writer = new BatchWriter({
      store: options.store,
      database: options.database,
      allowDuplicates: options.allowDuplicates,
      batchSize: options.batchSize,
      textBytes,
    });
    this.pool = pool;
    this.growth = new WorkerGrowth(pool, options.workers ?? maxPoolSize(), textBytes, started);
    this.queue = new CheckingQueue(pool);
    this.progress = new ProgressMeter(options.file, size, options.onProgress);
  }

  /** The steps in turn: the summary, or an ImportFailure with the summary of what was done. */
  async run(): Promise<ImportSummary> {
    try {
      await this.read();
      await this.finish();
    } catch (error) {
      await this.stop(error);
    }
    await this.close();
    return this.summarise();
  }

  /**
   * Reads the input to its end, or until the database is full (maxGames): decoded, a line past the largest
   * game never held whole (its game is too large anyway), split into games, each submitted as it is split.
   * Stops at a checkpoint once the signal aborts.
   */
  async read(): Promise<void> {
    const { summary, progress } = this;
    this.input = inputBytes(
      this.file,
      (bytes) => {
        progress.read(bytes);
        summary.bytes = bytes;
      },
      this.options.signal,
    );
    this.checkpoint();
    const splitter = new PgnSplitter({ maxGameChars: this.maxGameSize });
    const texts = decodePgnStream(progress.given(this.input), (bytes) => progress.decoded(bytes), {
      maxLineBytes: this.maxGameSize,
      headBytes: OVERSIZE_KEPT_BYTES,
    });
    for await (const text of texts) {
      progress.text(typeof text === 'string' ? text.length : text.head.length + text.dropped);
      await this.submit(splitter.push(text));
      this.report();
      this.checkpoint();
      if (this.writer.stoppedAtMaxGames) break;
    }
    if (!this.writer.stoppedAtMaxGames) await this.submit(splitter.end());
  }

  /** Takes the splitter's games: to checking, or one not to be checked to the rejects file. */
  async submit(raws: RawGame[]): Promise<void> {
    for (const raw of raws) {
      if (raw.part || raw.oversize !== undefined || raw.cut !== undefined) await this.rejectUnchecked(raw);
      // An await per game would cost a turn of the microtask queue each: only a full chunk waits.
      else if (this.queue.add(raw)) await this.send();
    }
  }

  /**
   * Rejects a game unchecked: a piece of one larger than maxGameSize (RawGame.part, oversize), or one cut
   * short in a rejects file (RawGame.cut). Straight to the rejects file, once every game before it has been
   * taken back from checking (so the rejects file keeps the file's order); a game too large only its first
   * part, and its last piece counts it as rejected.
   */
  async rejectUnchecked(raw: RawGame): Promise<void> {
    await this.send();
    await this.takeUntil(() => this.queue.empty);
    const oversize = raw.part || raw.oversize !== undefined;
    if (oversize) await this.rejects.writeOversize(raw.text, raw.part !== true, raw.dropped);
    else await this.rejects.write(raw.text);
    if (raw.part) return;
    this.rejected(raw, oversize ? tooLarge(raw, this.maxGameSize) : cutShort(raw));
  }

  /**
   * Takes the results of the oldest chunk sent, if any: its games go to the writer, or rejected to the rejects
   * file. Waiting for them, the writer writes the batch so far, and WorkerGrowth may start another worker.
   */
  async takeResults(): Promise<void> {
    const oldest = this.queue.takeOldest();
    if (!oldest) return;
    // Whether the results came meanwhile is asked again after the write.
    if (!oldest.ready) await this.writer.flushEarly();
    if (!oldest.ready) await this.growth.wait(oldest.checked, this.queue.takenChars);
    const { items, warnings } = await oldest.checked;
    for (const { index, warning } of warnings) {
      const raw = oldest.raws[index] as RawGame;
      this.summary.warnings.push({
        file: this.file,
        line: raw.line,
        game: raw.index,
        warning: detached(warning),
      });
    }
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as BatchItem;
      if (typeof item !== 'string') {
        this.summary.games++;
        await this.writer.add(item);
        continue;
      }
      const raw = oldest.raws[i] as RawGame;
      this.rejected(raw, detached(item));
      await this.rejects.write(raw.text);
    }
  }

  /** Sends the chunk being gathered, takes every result back, and writes the last batch. */
  async finish(): Promise<void> {
    await this.send();
    await this.takeUntil(() => this.queue.empty);
    await this.writer.flush();
  }

  /**
   * After `error` stopped the steps: what was counted is written when the import was interrupted (the games
   * checked are stored, as their rejects are in the rejects file) or its input turned out damaged (a .gz cut
   * off: the games before the damage are imported, as those of a PGN file cut off). Keeps the failure for
   * summarise: an ImportInterrupted when the signal stopped the import, the reading included (AbortError).
   */
  async stop(error: unknown): Promise<void> {
    const interrupted =
      this.options.signal?.aborted && (error instanceof ImportInterrupted || isAbort(error));
    this.failure = { error: interrupted ? new ImportInterrupted() : error };
    const keep = (error: unknown) => {
      this.failure = { error };
    };
    if (interrupted) await this.writer.flush().catch(keep);
    else if (error instanceof InputReadError) {
      await (async () => {
        await this.send();
        while (!this.queue.empty) await this.takeResults();
        await this.writer.flush();
      })().catch(keep);
    }
  }

  /**
   * Closes the input, the workers (unless they are the caller's), the writer's run of writes and the rejects
   * file, each also when another failed; the first failure is the one summarise reports.
   */
  async close(): Promise<void> {
    await this.input?.return(undefined).catch(() => undefined);
    const closing: (() => Promise<unknown>)[] = [
      async () => {
        if (!this.options.pool) await this.pool.close();
      },
      async () => this.writer.end(),
      async () => {
        this.summary.rejectsFile = await this.rejects.close();
      },
    ];
    for (const close of closing) await close().catch((error: unknown) => (this.failure ??= { error }));
  }

  /** What the import did: the summary, or after a failure the ImportFailure that holds it. */
  summarise(): ImportSummary {
    const { summary, writer } = this;
    summary.imported = writer.imported;
    summary.duplicates = writer.duplicates;
    summary.overLimit = writer.overLimit;
    summary.stoppedAtMaxGames = writer.stoppedAtMaxGames;
    summary.seconds = (performance.now() - this.started) / 1000;
    if (this.failure) throw new ImportFailure(summary, this.failure.error);
    return summary;
  }

  /** Counts a game as rejected, for `reason`. */
  private rejected(raw: RawGame, reason: string): void {
    this.summary.games++;
    this.summary.rejected++;
    this.summary.rejections.push({ file: this.file, line: raw.line, game: raw.index, reason });
  }

  /** Sends the chunk gathered, then takes results back while as much is sent as may be. */
  private async send(): Promise<void> {
    if (this.queue.send()) await this.takeUntil(() => !this.queue.full);
  }

  /** Takes the results of the oldest chunks, reporting progress, until `until` holds. */
  private async takeUntil(until: () => boolean): Promise<void> {
    while (!until()) {
      await this.takeResults();
      this.report();
      this.checkpoint();
    }
  }

  private report(): void {
    this.progress.report(this.summary.games, this.queue.takenChars);
  }

  /** Stops at a point where every game counted is in the batch, stored, or rejected and in the rejects file. */
  private checkpoint(): void {
    if (this.options.signal?.aborted) throw new ImportInterrupted();
  }
}

/** Imports one file (FileImport, its steps in turn). */
export async function importFile(options: ImportOptions): Promise<ImportSummary> {
  return (await FileImport.open(options)).run();
}

// The games an import keeps, written to the store in batches, one transaction each, and counted by what the
// store made of them.
import type { BulkWrites, Database, GameRecord, Store } from '../store/index.ts';

// Per store transaction, at most so many games and so much PGN. Each commit rewrites the index pages its rows
// touched, and the dedup index takes random keys: larger batches cost less per game, up to a point
// (docs/performance.md); the text bound keeps memory flat on comment-heavy files. While the workers are still
// busy, smaller batches (from MIN_BATCH) are written at once: that time would be idle anyway, and less is left
// to write after the last game.
const BATCH_GAMES = 5000;
const BATCH_CHARS = 8 << 20;
const MIN_BATCH = 2000;
// Inputs of this much text and more are written with checkpoints on a thread of their own
// (store.dialect.bulkWrites). Below it, that thread's start-up and its repeated copies of the same index
// pages cost more than the writer's own checkpoints, which smaller imports seldom reach
// (docs/performance.md).
const BULK_WRITES_BYTES = 8 << 20;

export interface BatchWriterOptions {
  store: Store;
  database: Database;
  allowDuplicates?: boolean;
  /** Most games per transaction (default BATCH_GAMES). */
  batchSize?: number;
  /** The input's size in text: whether the writes are a bulk run (store.dialect.bulkWrites). */
  textBytes: number;
}

export class BatchWriter {
  private readonly store: Store;
  private readonly database: Database;
  private readonly allowDuplicates: boolean | undefined;
  private readonly batchSize: number;
  private readonly bulk: BulkWrites | undefined;
  private batch: GameRecord[] = [];
  private batchChars = 0;
  /** Games added to the database, skipped as duplicates, and not added because it was full (maxGames). */
  imported = 0;
  duplicates = 0;
  overLimit = 0;

  constructor(options: BatchWriterOptions) {
    this.store = options.store;
    this.database = options.database;
    this.allowDuplicates = options.allowDuplicates;
    this.batchSize = options.batchSize ?? BATCH_GAMES;
    this.bulk = options.textBytes < BULK_WRITES_BYTES ? undefined : options.store.dialect.bulkWrites();
  }

  /** Whether the database reached its maxGames: games were left out, and the import stops. */
  get stoppedAtMaxGames(): boolean {
    return this.overLimit > 0;
  }

  /** Adds a game to the batch; writes the batch when it is full. */
  async add(record: GameRecord): Promise<void> {
    this.batch.push(record);
    this.batchChars += record.pgn.length;
    if (this.batch.length >= this.batchSize || this.batchChars >= BATCH_CHARS) await this.flush();
  }

  /** Writes the batch when it is worth a transaction of its own: for time that would be idle otherwise. */
  async flushEarly(): Promise<void> {
    if (this.batch.length >= Math.min(MIN_BATCH, this.batchSize)) await this.flush();
  }

  /** Writes the games of the batch, if any, in one transaction. */
  async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    await this.bulk?.ready();
    const outcome = await this.store.games.insert(this.database, this.batch, this.allowDuplicates);
    this.bulk?.committed();
    this.imported += outcome.inserted;
    this.duplicates += outcome.duplicates;
    this.overLimit += outcome.overLimit;
    this.batch = [];
    this.batchChars = 0;
  }

  /** Ends the run of writes (also after a failure); the games of a batch not flushed are dropped. */
  async end(): Promise<void> {
    await this.bulk?.end();
  }
}

// One PGN file into one database: streamed, validated game by game, written in batched transactions.
// A bad game never stops the rest: it is reported and its original text goes to the rejects file.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PgnSplitter } from '../chess/index.ts';
import type { RawGame } from '../chess/types.ts';
import type { Database, GameRecord, Store } from '../store/index.ts';
import { decodePgnStream } from './decode.ts';
import type { BatchItem } from './normalize-batch.ts';
import { defaultPoolSize, NormalizePool } from './normalize-pool.ts';
import { RejectsWriter } from './rejects.ts';

// Games per message to a worker: large enough that messaging costs little, small enough to spread work.
const CHUNK = 250;
const SMALL_FILE = 1 << 20;

export interface Rejection {
  file: string;
  line: number;
  game: number;
  reason: string;
}

export interface ImportProgress {
  file: string;
  games: number;
  bytes: number;
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
  bytes: number;
  seconds: number;
}

export interface ImportOptions {
  store: Store;
  database: Database;
  file: string;
  allowDuplicates?: boolean;
  /** Where rejected games go; default `<file>.rejected.pgn` (or the working folder when that is read-only). */
  rejectsFile?: string;
  batchSize?: number;
  /** Worker threads that normalise games; default one per core, none for small files (start-up costs more). */
  workers?: number;
  onProgress?: (progress: ImportProgress) => void;
}

export async function importFile(options: ImportOptions): Promise<ImportSummary> {
  const { store, database, file } = options;
  const started = performance.now();
  const totalBytes = (await stat(file)).size;
  const batchSize = options.batchSize ?? 1000;
  const rejects = new RejectsWriter(options.rejectsFile ?? `${file}.rejected.pgn`);
  const summary: ImportSummary = {
    file,
    games: 0,
    imported: 0,
    duplicates: 0,
    rejected: 0,
    overLimit: 0,
    stoppedAtMaxGames: false,
    rejections: [],
    rejectsFile: null,
    bytes: 0,
    seconds: 0,
  };
  let batch: GameRecord[] = [];
  const pool = new NormalizePool(options.workers ?? (totalBytes < SMALL_FILE ? 0 : defaultPoolSize()));
  // Batches in flight, oldest first: results are taken in file order, and at most two per worker wait,
  // which bounds memory however large the file.
  const inFlight: { raws: RawGame[]; items: Promise<BatchItem[]> }[] = [];
  const maxInFlight = Math.max(1, pool.size * 2);
  let chunk: RawGame[] = [];

  const flush = async () => {
    if (batch.length === 0) return;
    const outcome = await store.insertGames(database, batch, options.allowDuplicates);
    summary.imported += outcome.inserted;
    summary.duplicates += outcome.duplicates;
    summary.overLimit += outcome.overLimit;
    if (outcome.overLimit > 0) summary.stoppedAtMaxGames = true;
    batch = [];
  };

  const settleOldest = async () => {
    const oldest = inFlight.shift();
    if (!oldest) return;
    const items = await oldest.items;
    for (const [i, item] of items.entries()) {
      summary.games++;
      if (item.ok) {
        batch.push(item.record);
        if (batch.length >= batchSize) await flush();
        continue;
      }
      const raw = oldest.raws[i] as RawGame;
      summary.rejected++;
      summary.rejections.push({ file, line: raw.line, game: raw.index, reason: item.reason });
      await rejects.write(raw.text);
    }
  };

  const submit = async () => {
    if (chunk.length === 0) return;
    inFlight.push({ raws: chunk, items: pool.run(chunk.map((r) => r.text)) });
    chunk = [];
    while (inFlight.length >= maxInFlight) await settleOldest();
  };

  const take = async (raw: RawGame) => {
    chunk.push(raw);
    if (chunk.length >= CHUNK) await submit();
  };

  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  input.on('data', (chunk) => {
    summary.bytes += chunk.length;
  });
  const splitter = new PgnSplitter();
  try {
    for await (const text of decodePgnStream(input)) {
      for (const raw of splitter.push(text)) await take(raw);
      options.onProgress?.({ file, games: summary.games, bytes: summary.bytes, totalBytes });
      if (summary.stoppedAtMaxGames) break;
    }
    if (!summary.stoppedAtMaxGames) for (const raw of splitter.end()) await take(raw);
    await submit();
    while (inFlight.length > 0) await settleOldest();
    await flush();
  } finally {
    input.destroy();
    await pool.close();
    summary.rejectsFile = await rejects.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

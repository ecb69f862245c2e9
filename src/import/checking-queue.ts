// The games of an import on their way through the normalising workers: gathered into chunks, sent, and
// taken back oldest first, so that their results come in file order whatever order the workers finish in.
import type { RawGame } from '../chess/types.ts';
import type { CheckedBatch } from './normalize-batch.ts';
import type { NormalizePool } from './normalize-pool.ts';

// Per message to a worker, at most so many games and so much text: enough that messaging costs little, little
// enough that the work spreads evenly over the workers, also on games with an engine comment on every move
// (docs/performance.md).
const CHUNK_GAMES = 250;
const CHUNK_CHARS = 256 * 1024;
// Text in chunks sent and not yet taken back, at most: enough that the workers never run dry while the main
// thread writes a batch (docs/performance.md), and a bound on memory however large the file.
const IN_FLIGHT_CHARS = 16 << 20;
const IN_FLIGHT_CHUNKS_PER_WORKER = 32;

/** A chunk sent to the workers: its games, their text's length, and their results. */
export interface SentChunk {
  raws: RawGame[];
  chars: number;
  checked: Promise<CheckedBatch>;
  /** Whether the results came (checked has settled). */
  ready: boolean;
}

export class CheckingQueue {
  private readonly pool: NormalizePool;
  /** Chunks sent, oldest first. */
  private readonly sent: SentChunk[] = [];
  private sentChars = 0;
  private chunk: RawGame[] = [];
  private chunkChars = 0;
  /** Text of the chunks taken back so far. */
  private taken = 0;

  constructor(pool: NormalizePool) {
    this.pool = pool;
  }

  /** Adds a game to the chunk being gathered; true when the chunk is full and is to be sent. */
  add(raw: RawGame): boolean {
    this.chunk.push(raw);
    this.chunkChars += raw.text.length;
    return this.chunk.length >= CHUNK_GAMES || this.chunkChars >= CHUNK_CHARS;
  }

  /** Sends the chunk gathered to the workers; false when there is none. */
  send(): boolean {
    if (this.chunk.length === 0) return false;
    const checked = this.pool.run(
      this.chunk.map((r) => r.text),
      this.chunk.map((r) => r.line),
    );
    const entry: SentChunk = { raws: this.chunk, chars: this.chunkChars, checked, ready: false };
    checked.then(
      () => {
        entry.ready = true;
      },
      () => undefined, // the rejection reaches whoever takes the chunk, who awaits it
    );
    this.sent.push(entry);
    this.sentChars += this.chunkChars;
    this.chunk = [];
    this.chunkChars = 0;
    return true;
  }

  /** Whether as much is sent as may be: the oldest chunk is to be taken back before more is sent. */
  get full(): boolean {
    const maxChunks = Math.max(1, this.pool.size * IN_FLIGHT_CHUNKS_PER_WORKER);
    return this.sent.length >= maxChunks || this.sentChars >= IN_FLIGHT_CHARS;
  }

  /** Whether no chunk is sent and not taken back. */
  get empty(): boolean {
    return this.sent.length === 0;
  }

  /** The length of the text of the chunks taken back so far (their results may still be on their way). */
  get takenChars(): number {
    return this.taken;
  }

  /** The oldest chunk sent, taken off the queue (its results may still be on their way). */
  takeOldest(): SentChunk | undefined {
    const oldest = this.sent.shift();
    if (!oldest) return undefined;
    this.sentChars -= oldest.chars;
    this.taken += oldest.chars;
    return oldest;
  }
}

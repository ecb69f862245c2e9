// The CPU-heavy step of an import, for one batch of raw games: parse, check every move, derive the record.
// Runs inside worker threads (normalize-worker.ts) or inline when there are none.
//
// A batch's results cross threads packed into one string (normalizeBatch), not as records or tuples:
// structured clone builds every string and array of the copy one by one on the receiving main thread, the
// import's critical path (198k short games: ~0.2-0.3 s there, against ~30 ms to split one string). The
// fields are joined with U+0000, which no field can hold: a game with a NUL character is rejected (its
// reason, the one field of ours, names it without quoting it).
import { normalizeGame } from '../chess/index.ts';
import type { GameRecord } from '../store/index.ts';
import { contentHashOf, recordFields } from './record.ts';

/** Per game of the batch: its record, or the reason it was rejected. */
export type BatchItem = GameRecord | string;

const SEP = '\u0000';
/** The flags of a rejected game; its reason is the next field. */
const REJECTED = 'r';

export function normalizeBatch(texts: string[]): string {
  const fields: string[] = [];
  for (const text of texts) {
    const result = normalizeGame(text);
    if (result.ok) pushRecord(fields, recordFields(result.game));
    else {
      fields.push(REJECTED, result.reason);
    }
  }
  return fields.join(SEP);
}

/**
 * The record's fields: a flags field (bit i set when the i-th nullable value is present), the values present
 * (elos as decimal text), then the five that are never null. Most games lack most optional values. The
 * content hash is not sent: the main thread, which otherwise waits for the workers, computes it (unpackBatch).
 */
function pushRecord(out: string[], r: Omit<GameRecord, 'contentHash'>): void {
  const { white: w, black: b } = r;
  const flagsAt = out.length;
  out.push('');
  // Operands of | are evaluated left to right: the values go out in bit order.
  const flags =
    present(out, r.event) |
    (present(out, r.date) << 1) |
    (present(out, r.eco) << 2) |
    (present(out, w.name) << 3) |
    (present(out, w.elo) << 4) |
    (present(out, w.fideId) << 5) |
    (present(out, w.country) << 6) |
    (present(out, b.name) << 7) |
    (present(out, b.elo) << 8) |
    (present(out, b.fideId) << 9) |
    (present(out, b.country) << 10);
  out[flagsAt] = String(flags);
  out.push(r.result, JSON.stringify(r.metadata), r.moves, r.fen, r.pgn);
}

/** Adds the value, when there is one, and says whether it did (1) or not (0). */
function present(out: string[], value: string | number | null): number {
  if (value === null) return 0;
  out.push(typeof value === 'string' ? value : String(value));
  return 1;
}

/** The items of a packed batch, in order. */
export function unpackBatch(packed: string): BatchItem[] {
  const items: BatchItem[] = [];
  if (packed === '') return items; // an empty batch (''.split gives one empty field)
  const f = packed.split(SEP);
  let at = 0;
  const next = () => f[at++] as string;
  while (at < f.length) {
    const flags = next();
    if (flags === REJECTED) {
      items.push(next());
      continue;
    }
    const bits = Number(flags);
    const text = (i: number) => ((bits >> i) & 1 ? next() : null);
    const int = (i: number) => ((bits >> i) & 1 ? Number(next()) : null);
    // Object literals evaluate in source order: the fields are read in pushRecord's order.
    const fields = {
      event: text(0),
      date: text(1),
      eco: text(2),
      white: { name: text(3), elo: int(4), fideId: text(5), country: text(6) },
      black: { name: text(7), elo: int(8), fideId: text(9), country: text(10) },
      result: next(),
      metadata: JSON.parse(next()) as Record<string, string>,
      moves: next(),
      fen: next(),
      pgn: next(),
    };
    items.push({ ...fields, contentHash: contentHashOf(fields.pgn) });
  }
  return items;
}

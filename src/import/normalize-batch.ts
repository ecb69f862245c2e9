// The CPU-heavy step of an import, for one batch of raw games: parse and check every move, write the FEN and
// the export PGN. Runs inside worker threads (normalize-worker.ts) or inline when there are none; the thread
// that receives the results derives the records from them (unpackBatch).
//
// A batch's results cross threads packed into one string (normalizeBatch), not as records or tuples:
// structured clone builds every string and array of the copy one by one on the receiving thread, which costs
// it far more than splitting one string (docs/performance.md). The fields are joined with
// U+0000, which no field can hold: a game with a NUL character is rejected (its reason, the one field of
// ours, names it without quoting it).
//
// The record's fields from the tags (players, date, metadata) and the content hash are left to the main
// thread: with one worker on two cores the worker is the slower of the two, and the main thread has time to
// spare while it waits for results (docs/performance.md).
import { normalizeGame } from '../chess/index.ts';
import type { NormalizedGame } from '../chess/types.ts';
import type { GameRecord } from '../store/index.ts';
import { toGameRecord } from './record.ts';

/** Per game of the batch: its record, or the reason it was rejected. */
export type BatchItem = GameRecord | string;

/** A batch's results: per game its record or reason, and what the games it kept warn of (rarely any). */
export interface CheckedBatch {
  items: BatchItem[];
  /** The warnings of kept games, each with the game's position in the batch. */
  warnings: { index: number; warning: string }[];
}

const SEP = '\u0000';
/** In place of a game's tag count: the game was rejected, and its reason is the next field. */
const REJECTED = 'r';
/**
 * PGN at least this long travels on its own, not in the joined string: joining would copy long PGN (engine
 * comments) once more on the worker (docs/performance.md); a long string costs structured clone no more than
 * its bytes. Its field in the joined string is left empty (no game's PGN is).
 */
const LONG_PGN = 8192;

/** A batch's results as they cross threads: the joined fields, and the long PGNs in order. */
export interface PackedBatch {
  packed: string;
  long: string[];
}

/**
 * Per game: its number of tags, their names and values in source order, then its result, moves, FEN and PGN,
 * its number of warnings and the warnings; or REJECTED and the reason. `lines` are the games' first lines in
 * the input, for the line numbers in reasons and warnings (default: each game's own, from 1).
 */
export function normalizeBatch(texts: string[], lines?: number[]): PackedBatch {
  const fields: string[] = [];
  const long: string[] = [];
  for (let i = 0; i < texts.length; i++) {
    const result = normalizeGame(texts[i] as string, lines?.[i] ?? 1);
    if (!result.ok) {
      fields.push(REJECTED, result.reason);
      continue;
    }
    const { tags, moves, fen, pgn, warnings } = result.game;
    fields.push(String(tags.size));
    for (const [name, value] of tags) fields.push(name, value);
    if (pgn.length < LONG_PGN) fields.push(result.game.result, moves, fen, pgn);
    else {
      fields.push(result.game.result, moves, fen, '');
      long.push(pgn);
    }
    if (warnings === undefined) fields.push('0');
    else {
      // One by one: spread as arguments, a game's warnings would go on the stack, which a game of hundreds of
      // thousands (a tag repeated, or variations cut, that often) overflows, stopping the whole import.
      fields.push(String(warnings.length));
      for (const warning of warnings) fields.push(warning);
    }
  }
  return { packed: fields.join(SEP), long };
}

/**
 * The results of a batch checked on the calling thread: what unpackBatch(normalizeBatch(texts, lines)) gives,
 * without packing the fields into one string only to split it again (docs/performance.md).
 */
export function checkBatch(texts: string[], lines?: number[]): CheckedBatch {
  const checked: CheckedBatch = { items: [], warnings: [] };
  for (let i = 0; i < texts.length; i++) {
    const result = normalizeGame(texts[i] as string, lines?.[i] ?? 1);
    if (!result.ok) {
      checked.items.push(result.reason);
      continue;
    }
    for (const warning of result.game.warnings ?? []) checked.warnings.push({ index: i, warning });
    checked.items.push(toGameRecord(result.game));
  }
  return checked;
}

/** The results of a packed batch, in order. */
export function unpackBatch({ packed, long }: PackedBatch): CheckedBatch {
  const checked: CheckedBatch = { items: [], warnings: [] };
  const { items } = checked;
  if (packed === '') return checked; // an empty batch (''.split gives one empty field)
  const f = packed.split(SEP);
  let at = 0;
  let longAt = 0;
  while (at < f.length) {
    const count = f[at++] as string;
    if (count === REJECTED) {
      items.push(f[at++] as string);
      continue;
    }
    const tags = new Map<string, string>();
    for (let n = Number(count); n > 0; n--, at += 2) tags.set(f[at] as string, f[at + 1] as string);
    const result = f[at++] as string;
    const moves = f[at++] as string;
    const fen = f[at++] as string;
    const pgn = (f[at++] as string) || (long[longAt++] as string);
    for (let n = Number(f[at++]); n > 0; n--)
      checked.warnings.push({ index: items.length, warning: f[at++] as string });
    // The record takes only these of a normalised game.
    const game: Pick<NormalizedGame, 'tags' | 'moves' | 'fen' | 'pgn' | 'result'> = {
      tags,
      moves,
      fen,
      pgn,
      result,
    };
    items.push(toGameRecord(game));
  }
  return checked;
}

// The CPU-heavy step of an import, for one batch of raw games: parse, check every move, derive the record.
// Runs inside worker threads (normalize-worker.ts) or inline when there are none.
//
// A record crosses threads as a flat tuple: structured clone of the GameRecord object graph (two nested
// players) took about twice as long on the receiving main thread, which is the import's critical path.
import { normalizeGame } from '../chess/index.ts';
import type { GameRecord } from '../store/index.ts';
import { toGameRecord } from './record.ts';

export type RecordTuple = [
  event: string | null,
  date: string | null,
  result: string,
  eco: string | null,
  whiteName: string | null,
  whiteElo: number | null,
  whiteFideId: string | null,
  whiteCountry: string | null,
  blackName: string | null,
  blackElo: number | null,
  blackFideId: string | null,
  blackCountry: string | null,
  metadata: Record<string, string>,
  moves: string,
  fen: string,
  pgn: string,
  contentHash: string,
];

/** Per game of the batch: its record, or the reason it was rejected. */
export type BatchItem = RecordTuple | string;

export function normalizeBatch(texts: string[]): BatchItem[] {
  return texts.map((text) => {
    const result = normalizeGame(text);
    return result.ok ? toTuple(toGameRecord(result.game)) : result.reason;
  });
}

function toTuple(r: GameRecord): RecordTuple {
  const { white: w, black: b } = r;
  return [
    r.event,
    r.date,
    r.result,
    r.eco,
    w.name,
    w.elo,
    w.fideId,
    w.country,
    b.name,
    b.elo,
    b.fideId,
    b.country,
    r.metadata,
    r.moves,
    r.fen,
    r.pgn,
    r.contentHash,
  ];
}

export function fromTuple(t: RecordTuple): GameRecord {
  const [event, date, result, eco, wName, wElo, wFide, wCountry, bName, bElo, bFide, bCountry, ...rest] = t;
  const [metadata, moves, fen, pgn, contentHash] = rest;
  return {
    event,
    date,
    result,
    eco,
    white: { name: wName, elo: wElo, fideId: wFide, country: wCountry },
    black: { name: bName, elo: bElo, fideId: bFide, country: bCountry },
    metadata,
    moves,
    fen,
    pgn,
    contentHash,
  };
}

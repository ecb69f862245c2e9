// The CPU-heavy step of an import, for one batch of raw games: parse, check every move, derive the record.
// Runs inside worker threads (normalize-worker.ts) or inline when there are none.
import { normalizeGame } from '../chess/index.ts';
import type { GameRecord } from '../store/index.ts';
import { toGameRecord } from './record.ts';

export type BatchItem = { ok: true; record: GameRecord } | { ok: false; reason: string };

export function normalizeBatch(texts: string[]): BatchItem[] {
  return texts.map((text) => {
    const result = normalizeGame(text);
    return result.ok ? { ok: true, record: toGameRecord(result.game) } : { ok: false, reason: result.reason };
  });
}

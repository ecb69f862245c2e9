// A game's content hash: what identifies it within its database, and what the import's dedup looks up.
// A module of its own, without the store's drivers: the import's worker threads load it.
import { hash } from 'node:crypto';

/**
 * Identical export PGN means an identical game (tags, moves, comments and variations). The import computes it,
 * and migrations that rewrite stored exports.
 */
export function contentHashOf(pgn: string): string {
  return hash('sha256', pgn, 'hex');
}

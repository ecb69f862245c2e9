// Public API of the pure chess layer.
export type { MoveNode, MoveTree } from './export-pgn.ts';
export { exportResult, exportTags, SEVEN_TAG_ROSTER, writeExportPgn } from './export-pgn.ts';
export { normalizeGame } from './normalize.ts';
export type { ParsedGame, ParsedMove, ParseResult } from './parse.ts';
export { parseGame } from './parse.ts';
export { PgnSplitter, splitPgn } from './split.ts';
export type { NormalizedGame, NormalizeResult, RawGame } from './types.ts';

// Public API of the pure chess layer.
export { exportResult, exportTags, SEVEN_TAG_ROSTER, writeExportPgn } from './export-pgn.ts';
export { normalizeGame } from './normalize.ts';
export type { ParsedGame, ParseResult } from './parse.ts';
export { parseGame } from './parse.ts';
export { CUT_NOTE, PgnSplitter, splitPgn } from './split.ts';
export type { MoveKind, MoveNode, MoveTree } from './tree.ts';
export type { LongLine, NormalizedGame, NormalizeResult, RawGame } from './types.ts';

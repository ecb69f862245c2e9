// The contract between the pure chess layer and its users (import, store, api).

/** One game's original text, cut out of a PGN stream before any parsing. */
export interface RawGame {
  /** The game's original text, exactly as read (after decoding), for the rejects file. */
  text: string;
  /** 1-based line of the input at which the game's text starts. */
  line: number;
  /** 1-based number of the game within its input. */
  index: number;
  /**
   * Set on the pieces of a game longer than the splitter's maxGameChars, which it hands out as it reads them
   * instead of holding the game whole: `part` on every piece but the last, `oversize` (the game's whole
   * length in characters, of a long line its head alone: LongLine) on the last. Such a game is not to be
   * checked: it is rejected for its size, and its text is the pieces' texts in order. Never set without
   * maxGameChars or a LongLine.
   */
  part?: true;
  oversize?: number;
  /**
   * On the last piece of a game too large to hold (oversize) that has a line longer than its reader would
   * decode (LongLine): the first such line, its number and length in bytes.
   */
  longLine?: { line: number; bytes: number };
  /** On that piece: the bytes of the game's long lines that were never decoded, after their heads (LongLine). */
  dropped?: number;
  /**
   * The line of a note that a rejects file ends a game with when it keeps only the first part of it
   * (CUT_NOTE): the game is not whole, and is rejected unchecked.
   */
  cut?: number;
}

/**
 * A line longer than its reader decodes (decodePgnStream's maxLineBytes): only its start is text, the rest
 * was counted and dropped. The splitter reads it as a line of its start alone, in a game that it rejects for
 * its size.
 */
export interface LongLine {
  /** The line's first bytes (headBytes, ending at a character), decoded. */
  head: string;
  /** The line's length in bytes, without its line end. */
  bytes: number;
  /** The bytes of the line after the head, never decoded. */
  dropped: number;
}

/** A game read, checked move by move and normalised. */
export interface NormalizedGame {
  /** Every tag pair of the game, in source order, values unescaped. */
  tags: Map<string, string>;
  /** Main line in UCI notation, one space between moves, '' when the game has no moves. */
  moves: string;
  /** The position after the last move of the main line. */
  fen: string;
  /** Number of plies of the main line. */
  plies: number;
  /** The game in the PGN standard's export format, ending with a newline. */
  pgn: string;
  /** The result in the export's Result tag and terminator (exportResult): the tag's, else the terminator's. */
  result: string;
  /** Chess960 rules (Variant tag, or a FEN with Chess960 castling rights): castling in `moves` is king-takes-rook. */
  chess960: boolean;
  /** Non-fatal problems, e.g. a variation cut at an illegal move; absent when there are none. */
  warnings?: string[];
}

export type NormalizeResult = { ok: true; game: NormalizedGame } | { ok: false; reason: string };

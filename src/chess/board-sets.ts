// A board's square set of a color or a role, and a role's letters, chosen by comparison rather than as
// board[color], board[role] or LETTERS[role]: a keyed load whose key changes (white, black; six roles) goes
// megamorphic in V8, a stub-cache lookup per access, and these run several times per move
// (docs/performance.md). fast-path.ts replaces the sets the same way.
import type { Board } from 'chessops/board';
import type { SquareSet } from 'chessops/squareSet';
import type { Color, Role } from 'chessops/types';

export function sideOf(board: Board, color: Color): SquareSet {
  return color === 'white' ? board.white : board.black;
}

export function piecesOf(board: Board, role: Role): SquareSet {
  switch (role) {
    case 'pawn':
      return board.pawn;
    case 'knight':
      return board.knight;
    case 'bishop':
      return board.bishop;
    case 'rook':
      return board.rook;
    case 'queen':
      return board.queen;
    case 'king':
      return board.king;
  }
}

/** The role of the piece on `square`, if any (chessops' Board.getRole reads board[role] in a loop). */
export function roleAt(board: Board, square: number): Role | undefined {
  if (!board.occupied.has(square)) return undefined;
  if (board.pawn.has(square)) return 'pawn';
  if (board.knight.has(square)) return 'knight';
  if (board.bishop.has(square)) return 'bishop';
  if (board.rook.has(square)) return 'rook';
  if (board.queen.has(square)) return 'queen';
  return board.king.has(square) ? 'king' : undefined;
}

/** The role's letter in SAN: none for a pawn. */
export function sanLetter(role: Role): string {
  switch (role) {
    case 'pawn':
      return '';
    case 'knight':
      return 'N';
    case 'bishop':
      return 'B';
    case 'rook':
      return 'R';
    case 'queen':
      return 'Q';
    case 'king':
      return 'K';
  }
}

/** The role's letter in UCI (a promotion's suffix): lower case. */
export function uciLetter(role: Role): string {
  return role === 'pawn' ? 'p' : sanLetter(role).toLowerCase();
}

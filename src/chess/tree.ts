// The move tree shared by the parser (syntax), the player (legality, SAN, UCI) and the
// export writer. One object per move: parse.ts fills the syntax fields, play.ts the rest.

import type { Role } from 'chessops/types';

export type MoveKind = 'san' | 'castle' | 'coord' | 'drop' | 'null';

export interface MoveNode {
  /** Move as written, without move number, check marks and suffix annotations (for messages). */
  token: string;
  kind: MoveKind;
  /** SAN: moving piece. Castling: 'king'. */
  role: Role | undefined;
  /** SAN: disambiguation file / rank (0-7), -1 when absent. Coordinates: from-square file / rank. */
  file: number;
  rank: number;
  /** Destination square (0-63); castling: 6 for O-O, 2 for O-O-O (the file matters only). */
  to: number;
  promotion: Role | undefined;
  /** 1-based source line, for messages. */
  line: number;
  nags: number[] | undefined;
  /** Comments after the move. */
  comments: string[] | undefined;
  /** Comments before the move (first move of a variation only). */
  startComments: string[] | undefined;
  /** Alternatives to this move, each a line starting at this move's ply. */
  variations: MoveNode[][] | undefined;

  /** Canonical SAN, generated from the position (set by play.ts). */
  san: string;
  /** UCI: e1g1 castling in standard games, king takes rook (e1h1) in Chess960 games. */
  uci: string;
  /** Fullmove number of the move. */
  moveNumber: number;
  white: boolean;
}

export interface MoveTree {
  /** Comments before the first move. */
  comments: string[];
  moves: MoveNode[];
}

export function newNode(token: string, kind: MoveKind, line: number): MoveNode {
  return {
    token,
    kind,
    role: undefined,
    file: -1,
    rank: -1,
    to: -1,
    promotion: undefined,
    line,
    nags: undefined,
    comments: undefined,
    startComments: undefined,
    variations: undefined,
    san: '',
    uci: '',
    moveNumber: 0,
    white: true,
  };
}

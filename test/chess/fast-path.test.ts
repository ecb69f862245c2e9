// The chess layer answers some questions itself that chessops' public API answers too: src/chess/fast-path.ts
// (the context, the pieces that reach a square, playing a move), attacks.ts (isAttacked), fen.ts (the FEN),
// and play.ts, which writes SAN and resolves SAN and coordinate moves. This pins their results against
// chessops' own on the PGN corpus (test/helpers/corpus.ts), so that a chessops upgrade is a version bump and a
// run of this test:
//
// - at every position of each checked game's main line: contextOf against pos.ctx(); reachingFrom, for each
//   role, against chessops' attacks; the SAN and UCI that playLine wrote against makeSan and the move; playMove
//   against pos.play (the position after it); fenOf against makeFen;
// - at every SWEEP_EVERY-th of those positions: isAttacked on every square for both sides against
//   pos.kingAttackers; every legal move (allDests) written in SAN by makeSan, and in coordinates, resolves to
//   that move; every other move of a piece to a square it attacks is refused, in SAN and in coordinates; and
//   the whole position played with playMove deep-equals the one played with pos.play.
//
// A file of many games is sampled: MAX_GAMES games spread evenly over it (the three largest read to their first
// 2 MB, as corpus.test.ts reads them), unless CHESSPORT_FULL_CORPUS=1, which checks every game of every file,
// some 16 million positions (minutes: docs/performance.md). Without the corpus the corpus tests skip, saying so.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { attacks, pawnAttacks } from 'chessops/attacks';
import { type Chess, type Context, castlingSide, normalizeMove } from 'chessops/chess';
import { makeFen } from 'chessops/fen';
import { makeSan } from 'chessops/san';
import { SquareSet } from 'chessops/squareSet';
import { COLORS, type NormalMove, ROLES, type Role } from 'chessops/types';
import { kingCastlesTo, makeSquare, makeUci, opposite, parseUci, roleToChar } from 'chessops/util';
import { isAttacked } from '../../src/chess/attacks.ts';
import { contextOf, playMove, reachingFrom } from '../../src/chess/fast-path.ts';
import { fenOf } from '../../src/chess/fen.ts';
import { parseGame } from '../../src/chess/parse.ts';
import { playLine } from '../../src/chess/play.ts';
import { startPosition } from '../../src/chess/variants.ts';
import { CORPUS, NO_CORPUS } from '../helpers/corpus.ts';
import { CORPUS_FILES, EXPECTED, FULL, SAMPLE_BYTES, splitFile } from '../helpers/corpus-table.ts';

/** Games checked per file unless FULL, spread evenly over it. */
const MAX_GAMES = 150;
/** Every how many positions of the corpus the costlier checks run. */
const SWEEP_EVERY = FULL ? 16 : 32;

const BOARD_SETS = [
  'occupied',
  'promoted',
  'white',
  'black',
  'pawn',
  'knight',
  'bishop',
  'rook',
  'queen',
  'king',
] as const;
const PROMOTIONS: Role[] = ['queen', 'rook', 'bishop', 'knight'];

function newContext(): Context {
  return {
    king: undefined,
    blockers: SquareSet.empty(),
    checkers: SquareSet.empty(),
    variantEnd: false,
    mustCapture: false,
  };
}

function squares(set: SquareSet): string {
  return [...set].map(makeSquare).join(' ');
}

function sameContext(got: Context, want: Context, at: string): void {
  if (
    got.king === want.king &&
    got.checkers.equals(want.checkers) &&
    got.blockers.equals(want.blockers) &&
    got.variantEnd === want.variantEnd &&
    got.mustCapture === want.mustCapture
  )
    return;
  assert.deepEqual(
    { ...got, checkers: squares(got.checkers), blockers: squares(got.blockers) },
    { ...want, checkers: squares(want.checkers), blockers: squares(want.blockers) },
    `contextOf ${at}`,
  );
}

/** The same position, field by field (a deep comparison of the whole position runs every SWEEP_EVERY moves). */
function samePosition(got: Chess, want: Chess, at: string): void {
  for (const name of BOARD_SETS)
    if (!got.board[name].equals(want.board[name]))
      assert.equal(squares(got.board[name]), squares(want.board[name]), `playMove: board.${name} ${at}`);
  assert.equal(got.turn, want.turn, `playMove: turn ${at}`);
  assert.equal(got.epSquare, want.epSquare, `playMove: epSquare ${at}`);
  assert.equal(got.halfmoves, want.halfmoves, `playMove: halfmoves ${at}`);
  assert.equal(got.fullmoves, want.fullmoves, `playMove: fullmoves ${at}`);
  assert.ok(
    got.castles.castlingRights.equals(want.castles.castlingRights),
    `playMove: castling rights ${at}`,
  );
  for (const color of COLORS) {
    assert.deepEqual(got.castles.rook[color], want.castles.rook[color], `playMove: castling rooks ${at}`);
    for (const side of ['a', 'h'] as const)
      assert.ok(got.castles.path[color][side].equals(want.castles.path[color][side]), `playMove: path ${at}`);
  }
}

/**
 * The squares from which a `role` piece of the side to move could reach `to`, in chessops' terms: its pieces
 * of that role within the role's attacks from `to` (for pawns, a pawn of the other side's, and `to`'s file).
 */
function origins(pos: Chess, role: Role, to: number): SquareSet {
  const pieces = pos.board.pieces(pos.turn, role);
  if (role === 'pawn')
    return SquareSet.fromFile(to & 7)
      .union(pawnAttacks(opposite(pos.turn), to))
      .intersect(pieces);
  return attacks({ role, color: pos.turn }, to, pos.board.occupied).intersect(pieces);
}

const found = new Int8Array(64);

/** makeFen of the position, with its halfmove clock (toSetup caps it at 150; fenOf does not). */
function chessopsFen(pos: Chess): string {
  return makeFen({ ...pos.toSetup(), halfmoves: pos.halfmoves });
}

function sameOrigins(fast: Chess, ref: Chess, to: number, at: string): void {
  for (const role of ROLES) {
    const n = reachingFrom(fast, role, to, found);
    let got = SquareSet.empty();
    for (let k = 0; k < n; k++) got = got.with(found[k] as number);
    const want = origins(ref, role, to);
    if (n !== want.size() || !got.equals(want))
      assert.equal(squares(got), squares(want), `reachingFrom(${role}, ${makeSquare(to)}) ${at}`);
  }
}

/** Our UCI of a legal move (king takes rook for castling): the king's square in standard games. */
function uciOf(pos: Chess, move: NormalMove, chess960: boolean): string {
  const side = castlingSide(pos, move);
  if (side === undefined || chess960) return makeUci(move);
  return makeUci({ from: move.from, to: kingCastlesTo(pos.turn, side) });
}

/** Plays the one move `text` from `pos` (not changed) as the chess layer reads and plays it. */
function playText(pos: Chess, chess960: boolean, text: string) {
  const parsed = parseGame(`${text} *`);
  assert.ok(parsed.ok && parsed.game.moves.length === 1, `${text} parses as one move`);
  const node = parsed.game.moves[0] as (typeof parsed.game.moves)[number];
  const result = playLine(pos.clone(), parsed.game.moves, chess960, 0, []);
  return { error: result.error, san: node.san, uci: node.uci };
}

function accepts(
  pos: Chess,
  chess960: boolean,
  text: string,
  move: NormalMove,
  san: string,
  at: string,
): void {
  const played = playText(pos, chess960, text);
  assert.deepEqual(played, { error: undefined, san, uci: uciOf(pos, move, chess960) }, `${text} ${at}`);
}

function refuses(pos: Chess, chess960: boolean, text: string, at: string): void {
  const played = playText(pos, chess960, text);
  assert.match(played.error ?? '', /^illegal move /, `${text} is refused ${at}`);
}

/** The costlier checks of one position: attacks everywhere, and every legal and every refused move. */
function sweep(pos: Chess, chess960: boolean, at: string): void {
  for (const by of COLORS)
    for (let square = 0; square < 64; square++)
      if (
        isAttacked(pos.board, square, by, pos.board.occupied) !==
        pos.kingAttackers(square, by, pos.board.occupied).nonEmpty()
      )
        assert.fail(`isAttacked(${makeSquare(square)}, ${by}) ${at}`);
  const ctx = pos.ctx();
  for (const [from, dests] of pos.allDests(ctx)) {
    const piece = pos.board.get(from);
    assert.ok(piece);
    for (const to of dests) {
      const promotes = piece.role === 'pawn' && SquareSet.backranks().has(to);
      for (const promotion of promotes ? PROMOTIONS : [undefined]) {
        const move: NormalMove = { from, to, promotion };
        const san = makeSan(pos, move);
        accepts(pos, chess960, san, move, san, at);
        accepts(pos, chess960, makeUci(move), move, san, at);
        if (!chess960 && castlingSide(pos, move))
          accepts(pos, chess960, uciOf(pos, move, false), move, san, at);
      }
    }
    for (const to of attacks(piece, from, pos.board.occupied).diff(dests)) {
      const suffix = piece.role === 'pawn' && SquareSet.backranks().has(to) ? 'q' : '';
      refuses(pos, chess960, `${makeSquare(from)}${makeSquare(to)}${suffix}`, at);
      const san =
        piece.role === 'pawn'
          ? `${makeSquare(from)[0]}x${makeSquare(to)}${suffix && '=Q'}`
          : `${roleToChar(piece.role).toUpperCase()}${makeSquare(from)}${makeSquare(to)}`;
      refuses(pos, chess960, san, at);
    }
  }
}

interface Counts {
  positions: number;
  /** The costlier checks run at every sweepEvery-th position. */
  sweepEvery: number;
}

/** Checks one game's main line (up to its first illegal move, where the chess layer stops too). */
function checkGame(text: string, label: string, counts: Counts): void {
  const parsed = parseGame(text);
  if (!parsed.ok) return;
  const start = startPosition(parsed.game.tags);
  if (!start.ok) return;
  const { pos, chess960 } = start.start;
  const line = parsed.game.moves;
  playLine(pos.clone(), line, chess960, 0, []);
  const ref = pos.clone(); // played by chessops
  const fast = pos; // played by playMove
  const ctx = newContext();
  for (let i = 0; i < line.length; i++) {
    const node = line[i] as (typeof line)[number];
    const at = `at ply ${i + 1} (${node.san}) of ${label}`;
    assert.equal(fenOf(fast), chessopsFen(ref), `fenOf ${at}`);
    const want = ref.ctx();
    sameContext(contextOf(fast, ctx), want, at);
    const move = normalizeMove(ref, parseUci(node.uci) as NormalMove) as NormalMove;
    assert.ok(ref.isLegal(move, want), `${node.uci} is legal ${at}`);
    assert.equal(node.san, makeSan(ref, move), `SAN ${at}`);
    assert.equal(node.uci, uciOf(ref, move, chess960), `UCI ${at}`);
    sameOrigins(fast, ref, move.to, at);
    const sweeping = counts.positions++ % counts.sweepEvery === 0;
    if (sweeping) sweep(ref, chess960, at);
    playMove(fast, move, ref.board.getRole(move.from) as Role);
    ref.play(move);
    samePosition(fast, ref, at);
    if (sweeping) assert.deepStrictEqual(fast, ref, `playMove: the whole position ${at}`);
  }
  assert.deepStrictEqual(fast, ref, `playMove: the whole position at the end of ${label}`);
  assert.equal(fenOf(fast), chessopsFen(ref), `fenOf at the end of ${label}`);
}

for (const file of CORPUS_FILES) {
  const expected = EXPECTED[file];
  const sampled = expected?.big === true && !FULL;
  test(`${file}: the fast path and the SAN agree with chessops${sampled ? ' (first 2 MB)' : ''}`, () => {
    const raws = splitFile(join(CORPUS, file), sampled ? SAMPLE_BYTES : Number.POSITIVE_INFINITY);
    const step = FULL ? 1 : Math.max(1, Math.ceil(raws.length / MAX_GAMES));
    const counts: Counts = { positions: 0, sweepEvery: SWEEP_EVERY };
    for (let i = 0; i < raws.length; i += step) {
      const raw = raws[i] as (typeof raws)[number];
      checkGame(raw.text, `game ${raw.index} (line ${raw.line}) of ${file}`, counts);
    }
  });
}

test('the PGN corpus is there', { skip: CORPUS_FILES.length === 0 && NO_CORPUS }, () => {
  assert.ok(CORPUS_FILES.length > 0);
});

test('positions the corpus holds few of: under-promotions, en passant, Chess960 castling', () => {
  // Checked as the corpus games are, every position swept.
  const games = [
    // Under-promotions with and without capture, and a check by promotion.
    '[FEN "8/1P4k1/8/8/8/8/6Kp/8 w - - 0 1"]\n[SetUp "1"]\n\n1. b8=N h1=R 2. Nc6 Rh8 3. Kf2 Rc8 *',
    '[FEN "r3k3/1P6/8/8/8/8/8/4K3 w q - 0 1"]\n[SetUp "1"]\n\n1. bxa8=Q+ Ke7 2. Qb7+ Kf6 *',
    // En passant: one that would uncover a check on its own king (refused in the sweep), and one played.
    '[FEN "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1"]\n[SetUp "1"]\n\n1. Kb6 Kg2 *',
    '[FEN "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"]\n[SetUp "1"]\n\n1. exd6 Kd7 2. Kd2 Kxd6 *',
    // Chess960 long castling, and castling with the king on its castling square already.
    '[Variant "Chess960"]\n[FEN "1r4kr/8/8/8/8/8/8/1R4KR w KQkq - 0 1"]\n[SetUp "1"]\n\n1. O-O-O O-O 2. Kc2 Kg7 *',
  ];
  const counts: Counts = { positions: 0, sweepEvery: 1 };
  for (const [i, text] of games.entries()) {
    const parsed = parseGame(text);
    assert.ok(parsed.ok);
    const start = startPosition(parsed.game.tags);
    assert.ok(start.ok, `game ${i + 1} starts`);
    const line = parsed.game.moves;
    const played = playLine(start.start.pos.clone(), line, start.start.chess960, 0, []);
    assert.equal(played.error, undefined, `game ${i + 1} plays`);
    checkGame(text, `game ${i + 1}`, counts);
  }
});

test('no module of src/chess but fast-path.ts reads square sets as numbers or writes a position', () => {
  const dir = join(import.meta.dirname, '../../src/chess');
  const internals =
    /\.(lo|hi)\b|new SquareSet\(|\bboard\.(occupied|promoted|white|black|pawn|knight|bishop|rook|queen|king)\s*=[^=]|\bpos\.(turn|epSquare|halfmoves|fullmoves|castles|board)\s*(=[^=]|\+=|-=)/;
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'fast-path.ts' || !name.endsWith('.ts')) continue;
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (internals.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
});

// The PGN corpus (corpus.ts, see its MANIFEST.md) as the tests expect it: per file, the games
// our splitter finds and normalizeGame accepts, pgn-extract 19.04's "games / ok" from the MANIFEST, and why
// we differ where we do, and how the tests read a file. Used by test/chess/corpus.test.ts,
// test/chess/fast-path.test.ts and test/import/corpus-rejects.test.ts.
import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { PgnSplitter, type RawGame } from '../../src/chess/index.ts';
import { CORPUS } from './corpus.ts';

/** CHESSPORT_FULL_CORPUS=1: the large files are checked whole, not sampled or skipped. */
export const FULL = process.env.CHESSPORT_FULL_CORPUS === '1';

export interface Expected {
  /** Games our splitter finds and games normalizeGame accepts. */
  games: number;
  ok: number;
  /** pgn-extract 19.04 "games / ok" from the MANIFEST. */
  pgnExtract: [number, number];
  /** First reject reason, when there are rejects. */
  reject?: string;
  /** Why we differ from pgn-extract. */
  note?: string;
  /** Large file: sampled unless CHESSPORT_FULL_CORPUS=1. */
  big?: true;
}

const NO_MOVETEXT_NOTE = 'pgn-extract does not count games without movetext; they are games to us';
const CRAZYHOUSE_NOTE =
  'crazyhouse is unsupported: we reject each game as a whole; pgn-extract cannot read drops and counts the fragments between them as games';

export const EXPECTED: Record<string, Expected> = {
  'large/mliebelt_pgn-parser__twic-01-232games.pgn': { games: 232, ok: 232, pgnExtract: [232, 232] },
  'large/niklasf_rust-pgn-reader__legal.pgn': { games: 100, ok: 100, pgnExtract: [100, 100] },
  'large/niklasf_shakmaty__twic1599_1000k.pgn': { games: 1110, ok: 1110, pgnExtract: [1110, 1110] },
  'large/notnil_chess__twic0920.pgn': { games: 2245, ok: 2245, pgnExtract: [2245, 2245] },
  'large/pgn-extract__fischer.pgn': { games: 34, ok: 34, pgnExtract: [34, 34] },
  'large/pgn-extract__petrosian.pgn': { games: 35, ok: 35, pgnExtract: [35, 35] },
  'large/pgnmentor_players_A-J.pgn': {
    games: 149184,
    ok: 149183,
    pgnExtract: [149184, 149183],
    reject: 'illegal move 31.Qxe1 (ply 61, line 16)',
    note: 'the 142 tag sections followed by two blank lines stay one game each (python-chess splits them)',
    big: true,
  },
  'large/stockfish-books__8moves_v3.pgn': { games: 34700, ok: 34700, pgnExtract: [34700, 34700] },
  'large/stockfish-books__bjbraams_chessdb_198350_lines.pgn': {
    games: 198350,
    ok: 198350,
    pgnExtract: [198350, 198350],
    big: true,
  },
  'large/tcec_season20_all.pgn': { games: 1237, ok: 1237, pgnExtract: [1237, 1237], big: true },

  'annotated/iigorr_pgn.net__chess-informant-sample.pgn': {
    games: 5,
    ok: 5,
    pgnExtract: [14, 10],
    note: 'pgn-extract mis-splits variations that start with a NAG ("($140 Qb5"); we attach such a NAG to the move',
  },
  'annotated/iigorr_pgn.net__tilb98r2.pgn': { games: 6, ok: 6, pgnExtract: [6, 6] },
  'annotated/iigorr_pgn.net__time-annotated-games.pgn': { games: 4, ok: 4, pgnExtract: [4, 4] },
  'annotated/lichess-org_dartchess__lichess-bullet-game.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'annotated/lichess-org_dartchess__wcc_2023.pgn': {
    games: 3,
    ok: 3,
    pgnExtract: [44, 41],
    note: 'pgn-extract trips over the escaped NAG "\\$15" and counts fragments; we read it as $15',
  },
  'annotated/lichess-org_dartchess__wcc_2023_eolcomment.pgn': {
    games: 3,
    ok: 3,
    pgnExtract: [44, 41],
    note: 'as wcc_2023.pgn',
  },
  'annotated/niklasf_python-chess__knightvuillaume-jannlee-zh-lichess.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [43, 42],
    reject: 'unsupported variant Crazyhouse',
    note: CRAZYHOUSE_NOTE,
  },
  'annotated/niklasf_python-chess__stockfish-learning.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'annotated/niklasf_python-chess__variations-nags-and-comments.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'annotated/niklasf_shakmaty__lichess_db_1000k.pgn': { games: 438, ok: 438, pgnExtract: [438, 438] },
  'annotated/pychess__annotated.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'annotated/pychess__dortmund.pgn': { games: 347, ok: 347, pgnExtract: [347, 347] },
  'annotated/pychess__world_matches.pgn': { games: 580, ok: 580, pgnExtract: [580, 580] },
  'annotated/tcec__TCEC_Season_22_-_League_1.pgn': { games: 112, ok: 112, pgnExtract: [112, 112] },

  'chess960/jhlywa_chess.js__3-fen-black-to-move.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'chess960/niklasf_python-chess__cutechess-fischerrandom.pgn': { games: 4, ok: 4, pgnExtract: [4, 4] },
  'chess960/pgn4web__chess960wch06.pgn': { games: 8, ok: 8, pgnExtract: [8, 8] },
  'chess960/pgn4web__tactics.pgn': { games: 928, ok: 928, pgnExtract: [928, 928] },
  'chess960/pychess__fenSetup.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'chess960/tcec__TCEC_Season_23_-_Chess324_Testing.pgn': { games: 24, ok: 24, pgnExtract: [24, 24] },
  'chess960/tcec__TCEC_Season_24_-_Dfrc_2_League_1.pgn': { games: 112, ok: 112, pgnExtract: [112, 112] },
  'chess960/tcec__TCEC_Season_28_-_Frd_4_League_A.pgn': { games: 84, ok: 84, pgnExtract: [84, 84] },
  'chess960/tcec__TCEC_Season_6_-_FRC.pgn': { games: 112, ok: 112, pgnExtract: [112, 112] },

  'awkward/lichess-org_database__2016-05.pgn': { games: 4798, ok: 4798, pgnExtract: [4798, 4798] },
  'awkward/lichess-org_scalachess__FWWRC.pgn': {
    games: 605,
    ok: 605,
    pgnExtract: [0, 0],
    note: NO_MOVETEXT_NOTE,
  },
  'awkward/lichess-org_scalachess__uzchesscup.pgn': {
    games: 45,
    ok: 45,
    pgnExtract: [0, 0],
    note: NO_MOVETEXT_NOTE,
  },
  'awkward/mliebelt_pgn-parser__lichess_mliebelt_2024-01-03.pgn': { games: 8, ok: 8, pgnExtract: [8, 8] },
  'awkward/niklasf_python-chess__chessbase-empty-line.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/niklasf_python-chess__kasparov-deep-blue-1997.pgn': { games: 6, ok: 6, pgnExtract: [6, 6] },
  'awkward/niklasf_python-chess__molinari-bordais-1979.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/niklasf_python-chess__nepomniachtchi-liren-game1.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/niklasf_python-chess__utf8-bom.pgn': { games: 2, ok: 2, pgnExtract: [2, 2] },
  'awkward/niklasf_rust-pgn-reader__rewrite-example.pgn': {
    games: 5,
    ok: 4,
    pgnExtract: [4, 4],
    reject: 'unsupported variant Antichess',
    note:
      'the move-less Antichess game is rejected for its variant (pgn-extract accepts it); the trailing tag-only ' +
      '[Foo]/[Baz] pseudo-game is a game to us, pgn-extract does not count it',
  },
  'awkward/pgn-extract__barnes-horton.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/pgn-extract__test-long-line.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/pgn-extract__test-promotion-in.pgn': { games: 8, ok: 8, pgnExtract: [8, 8] },
  'awkward/pgn-extract__test-setup-in.pgn': { games: 2, ok: 2, pgnExtract: [2, 2] },
  'awkward/pgn4web__gotd.pgn': { games: 171, ok: 171, pgnExtract: [171, 171] },
  'awkward/pychess__bilbao.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'awkward/scid__res_gameUTF8.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },

  'edge/jhlywa_chess.js__0-br-newlines.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [44, 43],
    reject: "unexpected token '<br' at line 1",
    note: 'HTML "<br />" instead of line breaks is not PGN: one rejected game; pgn-extract counts fragments',
  },
  'edge/mliebelt_pgn-parser__sampleGameThrow.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [3, 3],
    reject: "unexpected token 'Sf3' at line 2",
    note: 'German piece letter "Sf3" is rejected rather than guessed; pgn-extract counts fragments',
  },
  'edge/niklasf_chessops__headers-and-moves-on-the-same-line.pgn': {
    games: 3,
    ok: 0,
    pgnExtract: [2, 2],
    reject: 'unsupported variant Antichess',
    note: 'three Antichess games (tag and moves on one line) are rejected for their variant; pgn-extract finds two and plays them as chess',
  },
  'edge/niklasf_chessops__leading-whitespace.pgn': {
    games: 4,
    ok: 4,
    pgnExtract: [2, 2],
    note: 'indented tags and the tag-less last game are read; pgn-extract finds two games',
  },
  'edge/niklasf_chessops__pathological-headers.pgn': {
    games: 1,
    ok: 1,
    pgnExtract: [0, 0],
    note: NO_MOVETEXT_NOTE,
  },
  'edge/niklasf_python-chess__anastasian-lewis.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [1, 0],
    reject: 'null move at 41...Z0 (ply 82, line 20)',
  },
  'edge/niklasf_python-chess__antichess-programfox.pgn': {
    games: 2,
    ok: 0,
    pgnExtract: [2, 0],
    reject: 'unsupported variant Antichess',
  },
  'edge/niklasf_python-chess__saturs-jannlee-zh-lichess.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [39, 38],
    reject: 'unsupported variant Crazyhouse',
    note: CRAZYHOUSE_NOTE,
  },
  'edge/niklasf_python-chess__uci-moves.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/niklasf_rust-pgn-reader__illegal.pgn': {
    games: 100,
    ok: 99,
    pgnExtract: [100, 99],
    reject: 'illegal move 1...b4 (ply 2, line 20)',
  },
  'edge/notnil_chess__fixture-0008.pgn': {
    games: 1,
    ok: 1,
    pgnExtract: [0, 0],
    note: 'movetext without tags or result is a game to us; pgn-extract skips it',
  },
  'edge/notnil_chess__fixture-0009.pgn': { games: 1, ok: 1, pgnExtract: [0, 0], note: 'as fixture-0008' },
  'edge/notnil_chess__fixture-0010.pgn': { games: 1, ok: 1, pgnExtract: [0, 0], note: 'as fixture-0008' },
  'edge/notnil_chess__fixture-0013.pgn': { games: 3, ok: 3, pgnExtract: [3, 3] },
  'edge/notnil_chess__fixture-0015.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/pgn-extract-alt__empty.pgn': { games: 0, ok: 0, pgnExtract: [0, 0] },
  'edge/pgn-extract-alt__incalculable_headless.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/pgn-extract-alt__invalid_single.pgn': {
    games: 2,
    ok: 0,
    pgnExtract: [5, 5],
    reject: "unexpected token 'hite' at line 5",
    note: 'corrupted tags and moves are rejected (two pieces, cut at the broken tag line); pgn-extract salvages fragments',
  },
  'edge/pgn-extract__nested-comment.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [6, 6],
    reject: "unexpected token 'which' at line 1",
    note: 'braces do not nest in PGN: the text after the inner "}" is not movetext; pgn-extract counts fragments',
  },
  'edge/pgn-extract__test-allownullmoves.pgn': {
    games: 2,
    ok: 0,
    pgnExtract: [2, 0],
    reject: 'null move at 31...-- (ply 2, line 11)',
  },
  'edge/pgn-extract__test-fixresulttags-in.pgn': { games: 5, ok: 5, pgnExtract: [5, 5] },
  'edge/pgn-extract__test-fuzzydepth.pgn': { games: 4, ok: 4, pgnExtract: [4, 4] },
  'edge/pgn-extract__test-nagcomments.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/pgn-extract__test-nobadresults.pgn': { games: 9, ok: 9, pgnExtract: [9, 9] },
  'edge/pgn-extract__test-splitvariants.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/pgn4web__live-no-event.pgn': { games: 1, ok: 1, pgnExtract: [1, 1] },
  'edge/pychess__a.pgn': {
    games: 1,
    ok: 1,
    pgnExtract: [0, 0],
    note: 'truncated movetext without a result: we keep the moves; pgn-extract skips the game',
  },
  'edge/pychess__badpgn.pgn': {
    games: 1,
    ok: 0,
    pgnExtract: [2, 2],
    reject: 'malformed tag pair at line 1: [kj90trkm"sdfsdf"yl]',
    note: 'garbage is rejected; pgn-extract counts two games',
  },
  'edge/pychess__promotion.pgn': { games: 1, ok: 1, pgnExtract: [0, 0], note: 'as pychess__a.pgn' },
  'edge/pychess__zh.pgn': {
    games: 83,
    ok: 0,
    pgnExtract: [1222, 1157],
    reject: 'unsupported variant crazyhouse',
    note: CRAZYHOUSE_NOTE,
  },
};

/** The corpus files present on disk, as "folder/name.pgn", in folder order; empty when the corpus is absent. */
export const CORPUS_FILES = existsSync(CORPUS)
  ? ['large', 'annotated', 'chess960', 'awkward', 'edge'].flatMap((dir) =>
      readdirSync(join(CORPUS, dir))
        .filter((f) => f.endsWith('.pgn'))
        .sort()
        .map((f) => `${dir}/${f}`),
    )
  : [];

/** How much of a large file the tests read unless FULL: its first 2 MB. */
export const SAMPLE_BYTES = 2_000_000;

/**
 * Streams a file through the splitter in 1 MB blocks (UTF-8, or Latin-1 when the bytes are
 * not UTF-8, as the import layer does), up to `limit` bytes; only complete games are kept.
 */
export function splitFile(path: string, limit: number): RawGame[] {
  for (const encoding of ['utf-8', 'latin1'] as const) {
    const decoder = new TextDecoder(encoding, { fatal: true });
    const splitter = new PgnSplitter();
    const games: RawGame[] = [];
    const fd = openSync(path, 'r');
    const block = Buffer.alloc(1 << 20);
    let total = 0;
    try {
      for (;;) {
        const n = readSync(fd, block, 0, block.length, null);
        if (n === 0) break;
        games.push(...splitter.push(decoder.decode(block.subarray(0, n), { stream: true })));
        total += n;
        if (total >= limit) return games; // sample: the game at the cut is left out
      }
      games.push(...splitter.push(decoder.decode()), ...splitter.end());
      return games;
    } catch (err) {
      if (encoding === 'latin1' || !(err instanceof TypeError)) throw err;
    } finally {
      closeSync(fd);
    }
  }
  throw new Error('unreachable');
}

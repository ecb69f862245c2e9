// Where the PGN corpus is: real third-party PGN files (see the MANIFEST.md in it), read-only, never copied
// into the project. It lies beside the checkout, in ../shared/pgn; CHESSPORT_PGN_CORPUS names another
// folder. Every test and bench that reads it takes the folder from here, and skips, saying so, without it.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** ../shared/pgn, beside the checkout. */
const ASIDE = resolve(import.meta.dirname, '../../../shared/pgn');

/** The corpus folder (no trailing slash): folders `large`, `annotated`, `chess960`, `awkward`, `edge`. */
export const CORPUS = process.env.CHESSPORT_PGN_CORPUS ? resolve(process.env.CHESSPORT_PGN_CORPUS) : ASIDE;

/** Whether the corpus is there. */
export const CORPUS_PRESENT = existsSync(CORPUS);

/** The reason a test that needs the corpus skips without it. */
export const NO_CORPUS = `no PGN corpus at ${CORPUS} (CHESSPORT_PGN_CORPUS names its folder)`;

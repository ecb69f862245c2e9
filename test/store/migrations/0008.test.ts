// Migration 0008 on a store that holds games written before the export kept a comment's word starting with '%'
// off a line's first column (an escape line), and before the FEN's halfmove clock went past 150: each such game
// takes the present export (and its content hash, so that importing its file again finds it) or FEN, as a new
// change; every other game stays as it was.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { DIALECTS, openTestStore, record } from '../../helpers/dialects.ts';
import { queryStore, rewindStore } from '../../helpers/stores.ts';

const tags = (event: string) =>
  `[Event "${event}"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n[White "?"]\n[Black "?"]\n[Result "*"]\n\n`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Exports as the earlier versions wrote them, and as the present one writes the same games. */
const AFTER_MOVE_BEFORE = `${tags('Percent')}1. e4 {The engine, asked about this move after a very long think, answered\n%eval 0.31} 1... e5 *\n`;
const AFTER_MOVE_NOW = `${tags('Percent')}1. e4 {The engine, asked about this move after a very long think,\nanswered %eval 0.31} 1... e5 *\n`;
const PERCENT_INSIDE = `${tags('Inside')}1. e4 {sure to 100 %, and more} 1... e5 *\n`;
const OWN_LINES_BEFORE = `${tags('Second')}1. e4 e5 2. Nf3 {Quite often such a long comment takes lines of its own, and\none of them would have begun with a percent sign here, where the engine says\n%eval +0.35 and the book agrees that this is the main line} 2... Nc6 *\n`;
const OWN_LINES_NOW = `${tags('Second')}1. e4 e5 2. Nf3 {Quite often such a long comment takes lines of its own, and\none of them would have begun with a percent sign here, where the engine\nsays %eval +0.35 and the book agrees that this is the main line} 2... Nc6 *\n`;
const PLAIN = `${tags('Plain')}1. e4 e5 *\n`;
/** A game whose FEN was stored with the halfmove clock capped at 150 (fixture halfmove-clock.pgn). */
const CLOCK = `${tags('Clock').replace('[Result "*"]', '[Result "1/2-1/2"]\n[FEN "8/3R4/5K1k/7p/7P/5b2/8/8 w - - 146 146"]\n[SetUp "1"]')}146. Rd2 Bg4 147. Rd7 Bf3 148. Rd2 Bg4 149. Rd7 1/2-1/2\n`;
const CLOCK_BEFORE = '8/3R4/5K1k/7p/6bP/8/8/8 b - - 150 149';
const CLOCK_NOW = '8/3R4/5K1k/7p/6bP/8/8/8 b - - 153 149';
/** A game whose clock is 150 indeed: found, and it stays. */
const AT_150 = `${tags('At 150').replace('[Result "*"]', '[Result "*"]\n[FEN "4k3/8/8/8/8/8/8/R3K3 w - - 149 200"]\n[SetUp "1"]')}200. Ra2 *\n`;
const AT_150_FEN = '4k3/8/8/8/8/8/R7/4K3 b - - 150 200';
const AFTER_E5 = 'rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2';
const AFTER_NC6 = 'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3';

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0008 on ${dialect}`, { skip }, () => {
    test("games whose export or FEN changed take the present one (and the export's hash) as a change; the others stay", async () => {
      const t = await openTestStore(dialect);
      try {
        const owner = await t.store.accounts.addUser({ login: 'pat' });
        const database = await t.store.databases.add({ ownerId: owner.id, name: 'Old' });
        const stored = [OWN_LINES_BEFORE, AFTER_MOVE_BEFORE, PERCENT_INSIDE, PLAIN, CLOCK, AT_150];
        const fens = [AFTER_NC6, AFTER_E5, AFTER_E5, AFTER_E5, CLOCK_BEFORE, AT_150_FEN];
        await t.store.games.insert(
          database,
          stored.map((pgn, i) => record(i + 1, { pgn, contentHash: sha256(pgn), fen: fens[i] as string })),
        );
        type Row = { pgn: string; content_hash: string; fen: string; seq: number; updated_at: number };
        const rows = () =>
          queryStore<Row>(t.url, 'select pgn, content_hash, fen, seq, updated_at from games order by pk');
        const before = await rows();
        const lastSeq = Math.max(...before.map((g) => Number(g.seq)));
        // The store as it was before 0008: it and every later migration run again when the store is next opened.
        await rewindStore(t.url, '0008');
        const reopened = await t.reopen();
        const after = await rows();
        assert.deepEqual(
          after.map((g) => [g.pgn, g.content_hash]),
          [OWN_LINES_NOW, AFTER_MOVE_NOW, PERCENT_INSIDE, PLAIN, CLOCK, AT_150].map((pgn) => [
            pgn,
            sha256(pgn),
          ]),
        );
        assert.deepEqual(
          after.map((g) => g.fen),
          [AFTER_NC6, AFTER_E5, AFTER_E5, AFTER_E5, CLOCK_NOW, AT_150_FEN],
        );
        const [ownLines, afterMove, inside, plain, clock, at150] = after;
        assert.ok(ownLines && afterMove && inside && plain && clock && at150);
        assert.ok(Number(ownLines.seq) > lastSeq && Number(afterMove.seq) > Number(ownLines.seq));
        assert.ok(Number(clock.seq) > Number(afterMove.seq));
        assert.deepEqual(
          [inside, plain, at150].map((g) => [Number(g.seq), Number(g.updated_at)]),
          [before[2], before[3], before[5]].map((g) => [Number(g?.seq), Number(g?.updated_at)]),
        );
        // A feed reader who had seen everything before meets exactly the rewritten games.
        const feed = await reopened.feed.changes(owner.id, lastSeq, 10);
        assert.deepEqual(
          feed.map((g) => g.white.name),
          ['White 1', 'White 2', 'White 5'],
        );
        // Importing the games again finds them by their present export; the earlier exports are gone.
        const again = (pgn: string) =>
          reopened.games.insert(database, [record(9, { pgn, contentHash: sha256(pgn) })]);
        assert.equal((await again(OWN_LINES_NOW)).duplicates, 1);
        assert.equal((await again(AFTER_MOVE_NOW)).duplicates, 1);
        assert.equal((await again(AFTER_MOVE_BEFORE)).duplicates, 0);
      } finally {
        await t.close();
      }
    });
  });
}

// Migration 0008 on a store that holds games exported before the export kept a comment's word starting with
// '%' off a line's first column (an escape line): each such game takes the present export and its content
// hash, as a new change, so that importing its file again finds it; every other game stays as it was.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { queryPostgres, queryStore } from '../helpers/stores.ts';
import { DIALECTS, openTestStore, record } from './dialects.ts';

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

/** Runs a statement on the store outside it (the test undoes the migration's record with it). */
async function execute(url: string, text: string): Promise<void> {
  if (/^postgres(ql)?:/.test(url)) {
    await queryPostgres(url, text);
    return;
  }
  const db = new Database(url);
  try {
    db.exec(text);
  } finally {
    db.close();
  }
}

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0008 on ${dialect}`, { skip }, () => {
    test('games whose export changed take the present one and its hash as a new change; the others stay', async () => {
      const t = await openTestStore(dialect);
      try {
        const owner = await t.store.addUser({ login: 'pat' });
        const database = await t.store.addDatabase({ ownerId: owner.id, name: 'Old' });
        const stored = [OWN_LINES_BEFORE, AFTER_MOVE_BEFORE, PERCENT_INSIDE, PLAIN];
        await t.store.insertGames(
          database,
          stored.map((pgn, i) => record(i + 1, { pgn, contentHash: sha256(pgn) })),
        );
        type Row = { pgn: string; content_hash: string; seq: number; updated_at: number };
        const rows = () =>
          queryStore<Row>(t.url, 'select pgn, content_hash, seq, updated_at from games order by pk');
        const before = await rows();
        const lastSeq = Math.max(...before.map((g) => Number(g.seq)));
        // The store as it was before 0008: it runs again when the store is next opened.
        await execute(t.url, "delete from kysely_migration where name >= '0008'");
        const reopened = await t.reopen();
        const after = await rows();
        assert.deepEqual(
          after.map((g) => [g.pgn, g.content_hash]),
          [OWN_LINES_NOW, AFTER_MOVE_NOW, PERCENT_INSIDE, PLAIN].map((pgn) => [pgn, sha256(pgn)]),
        );
        const [ownLines, afterMove, inside, plain] = after;
        assert.ok(ownLines && afterMove && inside && plain);
        assert.ok(Number(ownLines.seq) > lastSeq && Number(afterMove.seq) > Number(ownLines.seq));
        assert.deepEqual(
          [inside, plain].map((g) => [Number(g.seq), Number(g.updated_at)]),
          [before[2], before[3]].map((g) => [Number(g?.seq), Number(g?.updated_at)]),
        );
        // A feed reader who had seen everything before meets exactly the rewritten games.
        const feed = await reopened.listChanges(owner.id, lastSeq, 10);
        assert.deepEqual(
          feed.map((g) => g.white.name),
          ['White 1', 'White 2'],
        );
        // Importing the games again finds them by their present export; the earlier exports are gone.
        const again = (pgn: string) =>
          reopened.insertGames(database, [record(9, { pgn, contentHash: sha256(pgn) })]);
        assert.equal((await again(OWN_LINES_NOW)).duplicates, 1);
        assert.equal((await again(AFTER_MOVE_NOW)).duplicates, 1);
        assert.equal((await again(AFTER_MOVE_BEFORE)).duplicates, 0);
      } finally {
        await t.close();
      }
    });
  });
}

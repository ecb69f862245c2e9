// Migration 0006 on a store that holds games stored with the result "*" although their export PGN has a
// result (games without a valid Result tag, whose export took the terminator's): each takes its export's
// result as a new change, so that a feed reader past it meets it again; every other game stays as it was.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DIALECTS, openTestStore, record } from '../../helpers/dialects.ts';
import { queryStore, rewindStore } from '../../helpers/stores.ts';

const exported = (result: string, comment = '') =>
  `[Event "?"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "?"]\n[White "?"]\n[Black "?"]\n[Result "${result}"]\n\n` +
  `1. e4 e5 ${comment}${result}\n`;

for (const { dialect, skip } of DIALECTS) {
  describe(`migration 0006 on ${dialect}`, { skip }, () => {
    test('games stored as "*" take their export result as a new change; the others stay', async () => {
      const t = await openTestStore(dialect);
      try {
        const owner = await t.store.accounts.addUser({ login: 'pat' });
        const database = await t.store.databases.add({ ownerId: owner.id, name: 'Old' });
        await t.store.games.insert(database, [
          record(1, { result: '*', pgn: exported('0-1') }), // stored wrongly before 0006
          record(2, { result: '*', pgn: exported('*', '{[Result "1-0"]} ') }), // "*" in its tag: right
          record(3, { result: '1-0', pgn: exported('1-0') }),
          record(4, { result: '*', pgn: exported('1/2-1/2') }),
        ]);
        const before = await queryStore<{ event: string; result: string; seq: number; updated_at: number }>(
          t.url,
          'select event, result, seq, updated_at from games order by pk',
        );
        const lastSeq = Math.max(...before.map((g) => Number(g.seq)));
        // The store as it was before 0006: it and every later migration run again when the store is next opened.
        await rewindStore(t.url, '0006');
        const reopened = await t.reopen();
        const after = await queryStore<{ event: string; result: string; seq: number; updated_at: number }>(
          t.url,
          'select event, result, seq, updated_at from games order by pk',
        );
        assert.deepEqual(
          after.map((g) => [g.event, g.result]),
          [
            ['Event 1', '0-1'],
            ['Event 2', '*'],
            ['Event 3', '1-0'],
            ['Event 4', '1/2-1/2'],
          ],
        );
        // The corrected games are changes after every earlier one, in order; the others keep seq and time.
        const [one, two, three, four] = after;
        assert.ok(one && two && three && four);
        assert.ok(Number(one.seq) > lastSeq && Number(four.seq) > Number(one.seq));
        assert.ok(Number(one.updated_at) >= Math.max(...before.map((g) => Number(g.updated_at))));
        assert.deepEqual(
          [two, three].map((g) => [Number(g.seq), Number(g.updated_at)]),
          [before[1], before[2]].map((g) => [Number(g?.seq), Number(g?.updated_at)]),
        );
        // A feed reader who had seen everything before meets exactly the corrected games, with their result.
        const feed = await reopened.feed.changes(owner.id, lastSeq, 10);
        assert.deepEqual(
          feed.map((g) => [g.white.name, g.result]),
          [
            ['White 1', '0-1'],
            ['White 4', '1/2-1/2'],
          ],
        );
      } finally {
        await t.close();
      }
    });
  });
}

// SQLite's import INSERTs bind only the optional columns that have values (and metadata when not empty), many rows per statement
// (sqlite/game-rows.ts): every game still comes back with exactly its own values, in order, with consecutive
// seqs, whatever mix of missing tags the batch has.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Selectable } from 'kysely';
import type { GamesTable } from '../../../src/store/schema.ts';
import type { GameRecord } from '../../../src/store/types.ts';
import { record, sqliteStorePerTest } from '../../helpers/dialects.ts';
import { queryStore } from '../../helpers/stores.ts';

const fresh = sqliteStorePerTest();

/** Game n with the optional values that the bits of `shape` pick (the others null), and metadata with bit 11. */
function shaped(n: number, shape: number): GameRecord {
  const full = record(n, {
    white: { name: `White ${n}`, elo: 2000 + n, fideId: `${100 + n}`, country: 'NOR' },
    black: { name: `Black ${n}`, elo: 1900 + n, fideId: `${200 + n}`, country: 'SWE' },
  });
  const pick = <T>(bit: number, value: T) => (shape & (1 << bit) ? value : null);
  return {
    ...full,
    metadata: pick(11, full.metadata) ?? {},
    event: pick(0, full.event),
    date: pick(1, full.date),
    eco: pick(2, full.eco),
    white: {
      name: pick(3, full.white.name),
      elo: pick(4, full.white.elo),
      fideId: pick(5, full.white.fideId),
      country: pick(6, full.white.country),
    },
    black: {
      name: pick(7, full.black.name),
      elo: pick(8, full.black.elo),
      fideId: pick(9, full.black.fideId),
      country: pick(10, full.black.country),
    },
  };
}

type Row = Selectable<GamesTable>;

test('runs of every length and 50 sets of missing tags and metadata: each game keeps its own values, in order', async () => {
  const database = await fresh.t.store.databases.add({ ownerId: fresh.alice.id, name: 'Mixed' });
  // Runs of 1 to 1,301 games of one shape (statements of 1,024, 128, 16, 4 and 1 rows), 50 shapes (more than
  // the writer keeps statements for), no player data at all, and every tag present.
  const games: GameRecord[] = [];
  const lengths = [1, 3, 1301, 2, 70, 17, 5, 150, 1, 21];
  for (let shape = 0; shape < 50; shape++) {
    const bits = shape === 0 ? 0 : shape === 1 ? 0xfff : (shape * 2654435761) & 0xfff;
    const length = lengths[shape % lengths.length] as number;
    for (let i = 0; i < length; i++) games.push(shaped(games.length, bits));
  }
  const outcome = await fresh.t.store.games.insert(database, games);
  assert.equal(outcome.inserted, games.length);

  const rows = await queryStore<Row>(fresh.t.url, 'select * from games order by pk');
  assert.equal(rows.length, games.length);
  for (const [i, row] of rows.entries()) {
    const game = games[i] as GameRecord;
    assert.deepEqual(
      { ...row, seq: undefined },
      {
        ...row,
        seq: undefined,
        event: game.event,
        date: game.date,
        eco: game.eco,
        white_name: game.white.name,
        white_elo: game.white.elo,
        white_fide_id: game.white.fideId,
        white_country: game.white.country,
        black_name: game.black.name,
        black_elo: game.black.elo,
        black_fide_id: game.black.fideId,
        black_country: game.black.country,
        content_hash: game.contentHash,
        metadata: JSON.stringify(game.metadata),
        pgn: game.pgn,
        owner_id: fresh.alice.id,
        database_id: database.id,
      },
      `game ${i}`,
    );
    if (i > 0) assert.equal(row.seq, (rows[i - 1] as Row).seq + 1, `seq of game ${i}`);
  }
  assert.deepEqual(
    rows.map((r) => r.content_hash),
    games.map((g) => g.contentHash),
  );
});

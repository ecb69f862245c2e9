// The reads behind every API request (token lookup, game lists, detail, totals, the feed, the export's batches), compiled once per
// store (prepared.ts): the Store runs them as they are.
import type { Kysely } from 'kysely';
import { exportQueries } from './games.ts';
import { prepared, type RunQuery } from './prepared.ts';
import { changeColumns, expandedChangeColumns, type GameRow, summaryColumns } from './rows.ts';
import type { DB } from './schema.ts';
import { tokenQuery } from './tokens.ts';

/** The reads behind every API request, built once; each returns its rows. */
export function hotQueries(db: Kysely<DB>, run: RunQuery) {
  // An offset is walked entry by entry down the (scope, deleted, pk) index (and on PostgreSQL each row
  // skipped is read): `after` lets a page that starts where an earlier one ended seek there instead.
  const liveGames = (scope: 'owner_id' | 'database_id') =>
    prepared(run, 4, (value: string, after: number, limit: number, offset: number) =>
      db
        .selectFrom('games')
        .select([...summaryColumns, 'pk'])
        .where(scope, '=', value)
        .where('deleted', '=', 0)
        .where('pk', '>', after)
        .orderBy('pk')
        .limit(limit)
        .offset(offset),
    );
  // An owner's feed after a seq, on the (owner_id, seq) index: the items, or the items with their games.
  const changesAfter = <C extends typeof changeColumns | typeof expandedChangeColumns>(columns: C) =>
    prepared<[string, number, number], Pick<GameRow, C[number]>>(
      run,
      3,
      (ownerId: string, afterSeq: number, limit: number) =>
        db
          .selectFrom('games')
          .select(columns)
          .where('owner_id', '=', ownerId)
          .where('seq', '>', afterSeq)
          .orderBy('seq')
          .limit(limit),
    );
  return {
    token: prepared(run, 1, (hash: string) => tokenQuery(db).where('tokens.hash', '=', hash)),
    owner_id: liveGames('owner_id'),
    database_id: liveGames('database_id'),
    // The owner's (owner_id, seq) index answers it from its last entry.
    gamesVersion: prepared(run, 1, (ownerId: string) =>
      db
        .selectFrom('games')
        .select((eb) => eb.fn.max('seq').as('version'))
        .where('owner_id', '=', ownerId),
    ),
    // The owner's few databases, on the databases_owner_slug index.
    gameTotal: prepared(run, 1, (ownerId: string) =>
      db
        .selectFrom('databases')
        .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('game_count'), eb.lit(0)).as('total'))
        .where('owner_id', '=', ownerId)
        .where('deleted_at', 'is', null),
    ),
    databaseGameTotal: prepared(run, 1, (databaseId: string) =>
      db
        .selectFrom('databases')
        .select('game_count as total')
        .where('id', '=', databaseId)
        .where('deleted_at', 'is', null),
    ),
    game: prepared(run, 2, (ownerId: string, id: string) =>
      db
        .selectFrom('games')
        .selectAll()
        .where('id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('deleted', '=', 0),
    ),
    changes: changesAfter(changeColumns),
    expandedChanges: changesAfter(expandedChangeColumns),
    // A database's PGN export, batch by batch.
    ...exportQueries(db, run),
  };
}

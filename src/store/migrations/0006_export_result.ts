// 0006: games that earlier versions stored with the result "*" (no valid Result tag) while their export PGN
// (Result tag and terminator) has their movetext terminator's result take their export's result, as a
// change (a new seq and updatedAt), so that feed readers get the corrected game too.
import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../types.ts';
import { migrationChanges } from './changes.ts';

/** The export's result (its first tag line `[Result "..."]`), when it is a game's result other than "*". */
const EXPORT_RESULT = /^\[Result "(1-0|0-1|1\/2-1\/2)"\]$/m;

/** Migration 0006: games stored with "*" whose export PGN has another result take it, as a new change. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const takeChange = migrationChanges(db, dialect);
  for (let after = 0; ; ) {
    const { rows } = await sql<{ pk: number; owner_id: string; pgn: string }>`
      select pk, owner_id, pgn from games where pk > ${after} and result = '*' order by pk limit 10000`.execute(
      db,
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      // The tag section comes first, and a tag value cannot hold a line break: the first match is the tag.
      const result = EXPORT_RESULT.exec(row.pgn)?.[1];
      if (result === undefined) continue;
      const change = await takeChange(row.owner_id);
      await sql`update games set result = ${result}, seq = ${change.seq}, updated_at = ${change.now}
        where pk = ${row.pk}`.execute(db);
    }
    after = Number((rows.at(-1) as { pk: number }).pk);
  }
}

// 0008: what this version writes otherwise than the earlier ones, in a few games: the export PGN could wrap a
// comment right before a word starting with '%', which in a line's first column starts an escape line
// (readers skip it, with the rest of the comment and its '}'); and the FEN capped the halfmove clock at
// 150. A stored game whose export or FEN changes takes the present one (and the export's content hash, so
// that importing its file again finds it), as a change (a new seq and updatedAt), like 0006.
import { type Kysely, sql } from 'kysely';
import { normalizeGame } from '../../chess/index.ts';
import { contentHashOf } from '../content-hash.ts';
import { dedupKey } from '../postgres/dedup-key.ts';
import { keysBlob } from '../sqlite/game-keys.ts';
import type { Dialect } from '../types.ts';
import { migrationChanges } from './changes.ts';

/**
 * Migration 0008: the live games whose export PGN has a line starting with '%' (only a comment's word can be
 * there) or whose FEN has a halfmove clock of 150 (maybe capped) are read again from their export, which gives
 * the game they were made of; those whose export or FEN the present version writes otherwise get it.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const escapeLine = '\n%';
  const clock150 = '% 150 %'; // the FEN's fifth field: the sixth, the fullmove number, ends it
  const found = {
    sqlite: sql`(instr(pgn, ${escapeLine}) > 0 or fen like ${clock150})`,
    postgres: sql`(strpos(pgn, ${escapeLine}) > 0 or fen like ${clock150})`,
  }[dialect];
  // A game with a new export takes its new key: PostgreSQL's dedup_key column, SQLite's key log
  // (sqlite/game-keys.ts), as for a game updated with new content.
  const newKey = {
    sqlite: { column: () => sql``, log: logKey },
    postgres: {
      column: (databaseId: string, hash: string) => sql`dedup_key = ${dedupKey(databaseId, hash)},`,
      log: async () => {},
    },
  }[dialect];
  const takeChange = migrationChanges(db, dialect);
  for (let after = 0; ; ) {
    const { rows } = await sql<{
      pk: number;
      owner_id: string;
      database_id: string;
      pgn: string;
      fen: string;
    }>`
      select pk, owner_id, database_id, pgn, fen from games where pk > ${after} and deleted = 0 and ${found}
      order by pk limit 1000`.execute(db);
    if (rows.length === 0) break;
    for (const row of rows) {
      const again = normalizeGame(row.pgn);
      if (!again.ok) continue;
      const { pgn, fen } = again.game;
      const newPgn = pgn !== row.pgn;
      if (!newPgn && fen === row.fen) continue;
      const hash = contentHashOf(pgn);
      const change = await takeChange(row.owner_id);
      await sql`update games set pgn = ${pgn}, content_hash = ${newPgn ? hash : sql`content_hash`},
        ${newPgn ? newKey.column(row.database_id, hash) : sql``}
        fen = ${fen}, seq = ${change.seq}, updated_at = ${change.now} where pk = ${row.pk}`.execute(db);
      if (newPgn) await newKey.log(db, row.database_id, row.pk, hash);
      await sql`update databases set updated_at = ${change.now}, games_seq = ${change.seq}
        where id = ${row.database_id}`.execute(db);
    }
    after = Number((rows.at(-1) as { pk: number }).pk);
  }
}

/** SQLite: logs the key of the games row `pk`, with its new content, for its database. */
async function logKey(db: Kysely<unknown>, databaseId: string, pk: number, hash: string): Promise<void> {
  await sql`insert into game_keys (database_id, first_pk, keys)
    values (${databaseId}, ${pk}, ${keysBlob([hash])})`.execute(db);
}

// 0016: the games changed since they were made (updated, moved or deleted), by owner and change sequence:
// what `updatedSince` reads of the games made before its time (GameReads.listFiltered), where the games made
// since are a run at the end of the list. Partial: an import adds no entry (a new game's updated_at is its
// created_at), only a later change of the game does.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index games_owner_changed on games (owner_id, seq) where updated_at > created_at`.execute(
    db,
  );
}

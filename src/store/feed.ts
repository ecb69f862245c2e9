// The feed's position at a time: where `since` starts an owner's feed (the feed itself is a hot query of
// Store, listChanges).
import type { Kysely } from 'kysely';
import { lastSeq } from './change-allocation.ts';
import type { DB } from './schema.ts';
import type { Dialect } from './types.ts';

/**
 * The feed position just before the owner's first change at or after a time; the feed continues from there
 * by seq. A binary search over seq on the (owner_id, seq) index, valid because updated_at never decreases
 * as seq grows for one owner (Store.write): about log2(seq) index seeks instead of a scan.
 */
export async function changePositionAt(
  db: Kysely<DB>,
  dialect: Dialect,
  ownerId: string,
  sinceMs: number,
): Promise<number> {
  // Every committed seq is <= `end`. A write of the owner that commits during the search gets a seq above
  // all of the owner's seqs the search can see (Store.write; on PostgreSQL it may be <= end, but it is
  // still above `low`, which is always one of them), so it lies after the position whatever the search
  // decides. Each step's statement sees the owner's changes up to some seq, all of them.
  const end = await lastSeq(db, dialect);
  // Invariant: the owner's games with seq <= low changed before sinceMs, those with seq >= high at or after.
  let low = 0;
  let high = end + 1;
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    const next = await db
      .selectFrom('games')
      .select(['seq', 'updated_at'])
      .where('owner_id', '=', ownerId)
      .where('seq', '>=', mid)
      .where('seq', '<', high)
      .orderBy('seq')
      .limit(1)
      .executeTakeFirst();
    if (!next || Number(next.updated_at) >= sinceMs) high = mid;
    else low = Number(next.seq);
  }
  return low;
}

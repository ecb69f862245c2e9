// What a list or an export of games can be narrowed to (the filters of GET /games and
// GET /databases/{id}/games), as one WHERE condition. Each condition is served by an index of migration 0015
// or, for updatedSince, by the list and 0016's index of changed games (GameReads.changedSplit), all led by
// owner_id: no filter scans the owner's whole game set.
import type { ExpressionBuilder, ExpressionWrapper, SqlBool } from 'kysely';
import type { DB } from './schema.ts';

export interface GameFilter {
  /** The game's date (YYYY-MM-DD) at or after this day; a game without a complete date never matches. */
  dateFrom?: string;
  /** The game's date at or before this day. */
  dateTo?: string;
  /**
   * Only games whose latest change is after this feed position: what `updatedSince` resolves to
   * (Feed.positionAt), as an owner's updatedAt rises with seq.
   */
  afterSeq?: number;
  /** A player's name, exactly as stored. */
  player?: string;
  /** A player's FIDE id, exactly as stored. */
  fideId?: string;
  /** The side `player` and `fideId` played; either side without it. */
  color?: 'white' | 'black';
  result?: string;
  /** An ECO code (B90) or a prefix of one (B9, B): every stored ECO code is a letter A-E and two digits. */
  eco?: string;
  /** The event, exactly as stored. */
  event?: string;
}

type Eb = ExpressionBuilder<DB, 'games'>;
type Condition = ExpressionWrapper<DB, 'games', SqlBool>;

/** Whether the filter narrows anything. */
export function isFiltered(filter: GameFilter | undefined): filter is GameFilter {
  return filter !== undefined && Object.values(filter).some((value) => value !== undefined);
}

/** The player's conditions on one side: name and FIDE id, both when both are given. */
function side(eb: Eb, color: 'white' | 'black', filter: GameFilter): Condition[] {
  const conditions: Condition[] = [];
  if (filter.player !== undefined) conditions.push(eb(`${color}_name`, '=', filter.player));
  if (filter.fideId !== undefined) conditions.push(eb(`${color}_fide_id`, '=', filter.fideId));
  return conditions;
}

/** The filter as one condition on the games table (true when it narrows nothing). */
export function whereGameFilter(eb: Eb, filter: GameFilter): Condition {
  const conditions: Condition[] = [];
  if (filter.dateFrom !== undefined) conditions.push(eb('date', '>=', filter.dateFrom));
  if (filter.dateTo !== undefined) conditions.push(eb('date', '<=', filter.dateTo));
  if (filter.afterSeq !== undefined) conditions.push(eb('seq', '>', filter.afterSeq));
  if (filter.player !== undefined || filter.fideId !== undefined) {
    if (filter.color) conditions.push(eb.and(side(eb, filter.color, filter)));
    else conditions.push(eb.or([eb.and(side(eb, 'white', filter)), eb.and(side(eb, 'black', filter))]));
  }
  if (filter.result !== undefined) conditions.push(eb('result', '=', filter.result));
  if (filter.eco !== undefined) {
    const { eco } = filter;
    // A prefix as the range of the codes it starts: B9 is B90 to B99, B is B00 to B99.
    if (eco.length === 3) conditions.push(eb('eco', '=', eco));
    else conditions.push(eb.and([eb('eco', '>=', eco.padEnd(3, '0')), eb('eco', '<=', eco.padEnd(3, '9'))]));
  }
  if (filter.event !== undefined) conditions.push(eb('event', '=', filter.event));
  return eb.and(conditions);
}

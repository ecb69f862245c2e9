// A normalised game to the record the store keeps: the API's fields derived from the tags (docs/design.md 1-9).
import type { NormalizedGame } from '../chess/types.ts';
import { contentHashOf } from '../store/content-hash.ts';
import type { GameRecord, Player } from '../store/index.ts';

// Tags with a field of their own never repeat in metadata. WhiteCountry/BlackCountry join them only when
// they supplied the country (a name such as "Germany" is not a code and stays in metadata).
const OWN_FIELD_TAGS = new Set([
  'Event',
  'Date',
  'Result',
  'White',
  'Black',
  'WhiteElo',
  'BlackElo',
  'ECO',
  'WhiteFideId',
  'BlackFideId',
  'WhiteFed',
  'BlackFed',
]);

/** A tag's text, or null when it is absent, empty or PGN's "unknown" ("?", "-"). */
function known(value: string | undefined): string | null {
  const text = value?.trim();
  return text && text !== '?' && text !== '-' && text !== '??' ? text : null;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * PGN "YYYY.MM.DD" to "YYYY-MM-DD" when complete and a real (Gregorian) calendar date; otherwise null.
 * A year below 100 is no game's date (and JavaScript's Date would read it as 19xx).
 */
export function isoDate(value: string | undefined): string | null {
  if (value === undefined) return null; // most often (no Date tag): no expression to run
  const m = /^(\d{4})[.-](\d{2})[.-](\d{2})$/.exec(value.trim());
  if (!m) return null;
  const [, y = '', mo = '', d = ''] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return year >= 100 && days !== undefined && day >= 1 && day <= days ? `${y}-${mo}-${d}` : null;
}

/**
 * The year of a Date tag, complete or partial ("1858.??.??"): four digits before the first separator, from
 * 0100 on as isoDate takes them. Null for "????.??.??" and what is no date.
 */
export function yearOf(value: string | undefined): string | null {
  if (value === undefined) return null;
  const year = /^\s*(\d{4})(?:[.-]|\s*$)/.exec(value)?.[1];
  return year !== undefined && Number(year) >= 100 ? year : null;
}

/** A player's tag names, made once (building them per game cost a string and its hash per lookup). */
interface PlayerTags {
  name: string;
  elo: string;
  fideId: string;
  // The tags that may hold the country code, in order of preference.
  fed: string;
  country: string;
}

const WHITE: PlayerTags = {
  name: 'White',
  elo: 'WhiteElo',
  fideId: 'WhiteFideId',
  fed: 'WhiteFed',
  country: 'WhiteCountry',
};
const BLACK: PlayerTags = {
  name: 'Black',
  elo: 'BlackElo',
  fideId: 'BlackFideId',
  fed: 'BlackFed',
  country: 'BlackCountry',
};

/** Whether a tag's value (trimmed) is a three-letter country code. */
function isCountryCode(value: string | undefined): boolean {
  return value !== undefined && /^[A-Za-z]{3}$/.test(value.trim());
}

/** The tag that supplies the player's country: Fed, else Country, when it holds a three-letter code. */
function countryTag(tags: Map<string, string>, names: PlayerTags): string | undefined {
  if (isCountryCode(tags.get(names.fed))) return names.fed;
  if (isCountryCode(tags.get(names.country))) return names.country;
  return undefined;
}

function player(tags: Map<string, string>, names: PlayerTags, country: string | undefined): Player {
  // Absent tags (most often) are not given to the expressions: calling them would take most of this
  // function's time.
  const elo = tags.get(names.elo)?.trim() ?? '';
  const fideId = tags.get(names.fideId)?.trim() ?? '';
  return {
    name: known(tags.get(names.name)),
    elo: elo !== '' && /^[0-9]{1,4}$/.test(elo) && Number(elo) > 0 ? Number(elo) : null,
    // FIDE ids start at 1: an all-zero one is an exporter's placeholder, not an id shared by every such player.
    fideId: /^[0-9]{1,12}$/.test(fideId) && !/^0+$/.test(fideId) ? fideId : null,
    country: country === undefined ? null : (tags.get(country) as string).trim().toUpperCase(),
  };
}

/**
 * Site or Round as "?" (unknown): left out of metadata, as a missing one is. The export writes both, "?"
 * when missing, so a game imported again from its export has the same metadata; and like the fields of
 * their own (event, date, players), metadata says nothing rather than "?".
 */
function unknownRosterTag(name: string, value: string): boolean {
  return (name === 'Site' || name === 'Round') && value.trim() === '?';
}

/** The record of a normalised game (of which it reads only the tags, moves, FEN, PGN and result). */
export function toGameRecord(
  game: Pick<NormalizedGame, 'tags' | 'moves' | 'fen' | 'pgn' | 'result'>,
): GameRecord {
  const { tags } = game;
  const whiteCountry = countryTag(tags, WHITE);
  const blackCountry = countryTag(tags, BLACK);
  const ecoTag = tags.has('ECO') ? 'ECO' : tags.has('Eco') ? 'Eco' : undefined;
  const eco = ecoTag ? (tags.get(ecoTag)?.trim().toUpperCase() ?? '') : '';
  const kept: string[] = [];
  for (const [name, value] of tags) {
    const ownField =
      OWN_FIELD_TAGS.has(name) || name === ecoTag || name === whiteCountry || name === blackCountry;
    if (!ownField && !unknownRosterTag(name, value)) kept.push(name);
  }
  // In ASCII order of names, as the export has them after the roster: the same for a game imported from its
  // export (source order changed there).
  if (kept.length > 1) kept.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const metadata: Record<string, string> = {};
  for (const name of kept) metadata[name] = tags.get(name) as string;
  return {
    event: known(tags.get('Event')),
    date: isoDate(tags.get('Date')),
    year: yearOf(tags.get('Date')),
    // The export's: a game without a valid Result tag takes its terminator's, as its PGN does.
    result: game.result,
    eco: eco !== '' && /^[A-E][0-9]{2}$/.test(eco) ? eco : null,
    white: player(tags, WHITE, whiteCountry),
    black: player(tags, BLACK, blackCountry),
    metadata,
    moves: game.moves,
    fen: game.fen,
    pgn: game.pgn,
    contentHash: contentHashOf(game.pgn),
  };
}

// A normalised game to the record the store keeps: the API's fields derived from the tags (DESIGN.md 1-9).
import { hash } from 'node:crypto';
import type { NormalizedGame } from '../chess/types.ts';
import type { GameRecord, Player } from '../store/index.ts';

const RESULTS = new Set(['1-0', '0-1', '1/2-1/2', '*']);

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
  const m = /^(\d{4})[.-](\d{2})[.-](\d{2})$/.exec(value?.trim() ?? '');
  if (!m) return null;
  const [, y = '', mo = '', d = ''] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
  return year >= 100 && days !== undefined && day >= 1 && day <= days ? `${y}-${mo}-${d}` : null;
}

function country(
  tags: Map<string, string>,
  color: 'White' | 'Black',
): { code: string | null; fromTag?: string } {
  for (const tag of [`${color}Fed`, `${color}Country`]) {
    const value = tags.get(tag)?.trim();
    if (value && /^[A-Za-z]{3}$/.test(value)) return { code: value.toUpperCase(), fromTag: tag };
  }
  return { code: null };
}

function player(
  tags: Map<string, string>,
  color: 'White' | 'Black',
): { player: Player; countryTag?: string } {
  const elo = tags.get(`${color}Elo`)?.trim() ?? '';
  const fideId = tags.get(`${color}FideId`)?.trim() ?? '';
  const { code, fromTag } = country(tags, color);
  return {
    player: {
      name: known(tags.get(color)),
      elo: /^[0-9]{1,4}$/.test(elo) && Number(elo) > 0 ? Number(elo) : null,
      fideId: /^[0-9]{1,12}$/.test(fideId) ? fideId : null,
      country: code,
    },
    ...(fromTag && { countryTag: fromTag }),
  };
}

export function toGameRecord(game: NormalizedGame): GameRecord {
  const { tags } = game;
  const white = player(tags, 'White');
  const black = player(tags, 'Black');
  const ecoTag = tags.has('ECO') ? 'ECO' : tags.has('Eco') ? 'Eco' : undefined;
  const eco = ecoTag ? (tags.get(ecoTag)?.trim().toUpperCase() ?? '') : '';
  const metadata: Record<string, string> = {};
  for (const [name, value] of tags) {
    const ownField =
      OWN_FIELD_TAGS.has(name) || name === ecoTag || name === white.countryTag || name === black.countryTag;
    if (!ownField) metadata[name] = value;
  }
  const result = tags.get('Result')?.trim() ?? '*';
  return {
    event: known(tags.get('Event')),
    date: isoDate(tags.get('Date')),
    result: RESULTS.has(result) ? result : '*',
    eco: /^[A-E][0-9]{2}$/.test(eco) ? eco : null,
    white: white.player,
    black: black.player,
    metadata,
    moves: game.moves,
    fen: game.fen,
    pgn: game.pgn,
    // Identical export PGN means an identical game: tags, moves, comments and variations.
    contentHash: hash('sha256', game.pgn, 'hex'),
  };
}

// A normalised game to the record the store keeps: the API's fields derived from the tags (DESIGN.md 1-9).
import { createHash } from 'node:crypto';
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

/** PGN "YYYY.MM.DD" to "YYYY-MM-DD" when complete and a real calendar date; otherwise null. */
export function isoDate(value: string | undefined): string | null {
  const m = /^(\d{4})[.-](\d{2})[.-](\d{2})$/.exec(value?.trim() ?? '');
  if (!m) return null;
  const [, y, mo, d] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  const iso = `${y}-${mo}-${d}`;
  return date.toISOString().slice(0, 10) === iso ? iso : null;
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
  const skip = new Set(OWN_FIELD_TAGS);
  if (ecoTag) skip.add(ecoTag);
  if (white.countryTag) skip.add(white.countryTag);
  if (black.countryTag) skip.add(black.countryTag);
  const metadata: Record<string, string> = {};
  for (const [name, value] of tags) if (!skip.has(name)) metadata[name] = value;
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
    contentHash: createHash('sha256').update(game.pgn).digest('hex'),
  };
}

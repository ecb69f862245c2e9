// PGN and NDJSON answers (docs/design.md 15): chosen by format=pgn|ndjson or by an Accept header that prefers
// a PGN media type (or NDJSON, on the whole exports).
import type { FastifyReply, FastifyRequest } from 'fastify';

export const PGN_TYPE = 'application/x-chess-pgn';
const PGN_TYPES = new Set([PGN_TYPE, 'application/vnd.chess-pgn']);
/** Newline-delimited JSON, one JSON text a line: the export's JSON stream (Lichess's convention). */
export const NDJSON_TYPE = 'application/x-ndjson';

/** What an answer is: JSON, PGN text, or NDJSON (on the whole exports only). */
export type AnswerFormat = 'json' | 'pgn' | 'ndjson';

/**
 * The format the Accept header's most preferred acceptable type names: PGN, NDJSON where the route offers
 * it, JSON otherwise. On equal preference a named PGN or NDJSON type wins over wildcards and JSON: the
 * client named it explicitly.
 */
export function acceptedFormat(accept: string | undefined, ndjson = false): AnswerFormat {
  if (!accept) return 'json';
  let best: { q: number; format: AnswerFormat } = { q: 0, format: 'json' };
  for (const part of accept.split(',')) {
    const [type = '', ...params] = part.trim().toLowerCase().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!(q > 0)) continue;
    const name = type.trim();
    const format: AnswerFormat = PGN_TYPES.has(name)
      ? 'pgn'
      : ndjson && name === NDJSON_TYPE
        ? 'ndjson'
        : 'json';
    if (q > best.q || (q === best.q && format !== 'json' && best.format === 'json')) best = { q, format };
  }
  return best.format;
}

/** True when the Accept header's most preferred acceptable type is a PGN type. */
export function acceptsPgn(accept: string | undefined): boolean {
  return acceptedFormat(accept) === 'pgn';
}

/** Whether the route offers NDJSON: its format parameter takes it. */
function offersNdjson(request: FastifyRequest): boolean {
  const schema = request.routeOptions.schema?.querystring as
    | { properties?: { format?: { enum?: readonly string[] } } }
    | undefined;
  return schema?.properties?.format?.enum?.includes('ndjson') ?? false;
}

/** The answer's format: the format parameter's when given, else the Accept header's. */
export function answerFormat(request: FastifyRequest): AnswerFormat {
  const { format } = request.query as { format?: string };
  if (format === 'pgn' || format === 'ndjson') return format;
  return acceptedFormat(request.headers.accept, offersNdjson(request));
}

export function wantsPgn(request: FastifyRequest): boolean {
  return answerFormat(request) === 'pgn';
}

export function pgnHeaders(reply: FastifyReply, slug: string): FastifyReply {
  return reply
    .header('content-type', `${PGN_TYPE}; charset=utf-8`)
    .header('content-disposition', `attachment; filename="${slug}.pgn"`);
}

/**
 * The tag that names a game's id in a database export asked for with gameIds=true. Prefixed with the
 * service's name so that no tag a user already has means something else by it (Lichess writes GameId).
 */
export const GAME_ID_TAG = 'ChessportGameId';

/** Roster tags that the export writes first, always, in this order (Event to Result). */
const ROSTER_TAGS = 7;

/**
 * The game's export PGN with `[ChessportGameId "<id>"]` right after the Seven Tag Roster. A tag of that name
 * it holds already (a file exported with ids and imported again) gives way: the game's own id is the one a
 * consumer joins on.
 */
export function withGameIdTag(pgn: string, id: string): string {
  const end = pgn.indexOf('\n\n');
  const tags = end < 0 ? pgn.length : end;
  let text = pgn;
  const existing = text.slice(0, tags).indexOf(`\n[${GAME_ID_TAG} "`);
  if (existing >= 0) text = text.slice(0, existing) + text.slice(text.indexOf('\n', existing + 1));
  let at = 0;
  for (let n = 0; n < ROSTER_TAGS; n++) at = text.indexOf('\n', at) + 1;
  return `${text.slice(0, at)}[${GAME_ID_TAG} "${id}"]\n${text.slice(at)}`;
}

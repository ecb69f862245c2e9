// The answers of a read route as route schema entries, one per status: Fastify serialises with their body
// schemas, and @fastify/swagger turns the same entries (descriptions, headers, media types) into the
// document's responses. A header marked `required` is on every answer of that status; the document moves
// the mark to the header object and shares each header as one components/headers entry (see document.ts),
// the test suite's validator enforces it. What the headers say is what the black-box tests see
// (test/api/openapi.test.ts): no header of an answer may go undocumented.
import type { ErrorCode } from '../../platform/http/errors.ts';

interface HeaderSchema {
  type: 'string' | 'integer';
  description: string;
  minimum?: number;
  const?: string;
  required?: true;
}

const header = (type: HeaderSchema['type'], description: string, extra: Partial<HeaderSchema> = {}) =>
  ({ type, description, ...extra }) as HeaderSchema;

const required = (schema: HeaderSchema): HeaderSchema => ({ ...schema, required: true });

export const HEADERS = {
  'X-Request-Id': header(
    'string',
    'The id of this request in the server logs: the caller’s X-Request-Id when it is 1-128 characters of ' +
      '[A-Za-z0-9._-], otherwise a new UUID. Quote it when reporting a problem.',
  ),
  'X-RateLimit-Limit': header(
    'integer',
    'Requests allowed per window for this app and user (for this client address without a valid token).',
    { minimum: 1 },
  ),
  'X-RateLimit-Remaining': header('integer', 'Requests left in the current window.', { minimum: 0 }),
  'X-RateLimit-Reset': header('integer', 'Seconds until the current window resets.', { minimum: 0 }),
  // Descriptions are Markdown (the reference page renders them): placeholders in <> go in code spans, or
  // they would be taken for HTML tags and vanish.
  'RateLimit-Policy': header(
    'string',
    'IETF draft form of the limit: `"app-user";q=<limit>;w=<window seconds>` (`"client-address"` for ' +
      'requests without a valid token).',
  ),
  RateLimit: header(
    'string',
    'IETF draft form of what is left: `"app-user";r=<remaining>;t=<reset seconds>`.',
  ),
  'Retry-After': header('integer', 'Seconds to wait before retrying.', { minimum: 1 }),
  ETag: header(
    'string',
    'Strong validator of this representation; send it back in If-None-Match to get 304 while unchanged.',
  ),
  'Cache-Control': header(
    'string',
    'private, no-cache: never for shared caches; a client may keep a 200 but revalidates it ' +
      '(If-None-Match) before reuse.',
  ),
  Vary: header(
    'string',
    'The request headers the answer depends on: authorization, accept-encoding and, where PGN can be ' +
      'negotiated, accept; Origin where the CORS handling adds it (every origin gets the same answer).',
  ),
  Link: header(
    'string',
    'RFC 8288 paging links with root-relative targets: rel="next" and rel="last" (the page with the last ' +
      'item) while more items exist, rel="prev" after the first page, e.g. ' +
      '`</api/v1/games?limit=50&offset=50>; rel="next", </api/v1/games?limit=50&offset=950>; rel="last"`.',
  ),
  'X-Total-Count': header(
    'integer',
    'Number of items in the whole list (every page), counted when the answer was made; on JSON answers. A ' +
      'filtered game list with more matches than the server counts (FILTER_TOTAL_MAX, default 1000) has ' +
      'X-Total-Count-Exceeds instead.',
    { minimum: 0 },
  ),
  'X-Total-Count-Exceeds': header(
    'integer',
    'In place of X-Total-Count on a filtered game list (JSON pages) with more matches than the server counts: ' +
      'the list holds more than this many games (FILTER_TOTAL_MAX, default 1000), and the Link header has ' +
      'no rel="last". The same on every page of that list; follow rel="next" to the end.',
    { minimum: 1 },
  ),
  'Content-Disposition': header('string', 'On PGN answers: `attachment; filename="<slug>.pgn"`.'),
  'X-Changes-Cursor': header(
    'string',
    'On a whole export (PGN or NDJSON): the GET /api/v1/changes cursor that continues exactly after the ' +
      'snapshot the export was read from. Following the feed from it gives every change the export does not ' +
      'hold, and none that it does.',
  ),
  'WWW-Authenticate': header(
    'string',
    'RFC 6750 challenge: Bearer realm="chessport", error="...", error_description="..." (403 adds ' +
      'scope="..."). Without Bearer credentials (no Authorization header, an empty one, or another scheme ' +
      'such as Basic) it has no error and error_description. A 401 ends with resource_metadata="<server>/' +
      '.well-known/oauth-protected-resource" (RFC 9728), which names the OAuth server that issues tokens: ' +
      'without credentials, Bearer realm="chessport", resource_metadata="<server>/.well-known/oauth-' +
      'protected-resource" (Bearer realm="chessport" alone while the server runs without OAuth).',
  ),
} as const;

const RATE_LIMIT = [
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit-Policy',
  'RateLimit',
] as const;
type HeaderName = keyof typeof HEADERS;

/** The named headers; those in `mandatory` are marked required. */
function headers(names: readonly HeaderName[], mandatory: readonly HeaderName[] = names) {
  const set: Record<string, HeaderSchema> = {};
  for (const name of names) set[name] = mandatory.includes(name) ? required(HEADERS[name]) : HEADERS[name];
  return set;
}

/** Headers of every answer that went through authentication and the rate limit. */
const COUNTED: readonly HeaderName[] = ['X-Request-Id', ...RATE_LIMIT];
/** Set on every answer of a read route as soon as the route takes the request, errors included. */
const CACHING: readonly HeaderName[] = ['Cache-Control', 'Vary'];

const errorEntry = (
  description: string,
  code: ErrorCode,
  example: string,
  names: readonly HeaderName[],
  mandatory: readonly HeaderName[] = names,
) => ({
  description,
  headers: headers(names, mandatory),
  content: {
    'application/json': {
      schema: { $ref: 'ErrorBody#' },
      example: { error: code, error_description: example },
    },
  },
});

export const PGN_MEDIA_TYPE = 'application/x-chess-pgn';
export const NDJSON_MEDIA_TYPE = 'application/x-ndjson';

export interface ReadAnswers {
  /** The 200 JSON body and what it is. */
  ok: { description: string; schema: object };
  /** Offset paging with a Link header. */
  paged: boolean;
  /** A list that says its total (X-Total-Count); `bounded`: or that it exceeds a bound (X-Total-Count-Exceeds). */
  total: boolean | 'bounded';
  /** What the PGN answer holds, when PGN can be asked for (format=pgn or Accept). */
  pgn: string | undefined;
  /** What the NDJSON answer holds, when NDJSON can be asked for (format=ndjson or Accept). */
  ndjson?: string | undefined;
  /** The path names a resource that may not exist. */
  notFound: boolean;
}

export function readResponses(answers: ReadAnswers): Record<string, object> {
  const okHeaders: HeaderName[] = [...COUNTED, 'ETag', ...CACHING];
  if (answers.paged) okHeaders.push('Link');
  if (answers.total) okHeaders.push('X-Total-Count');
  if (answers.total === 'bounded') okHeaders.push('X-Total-Count-Exceeds');
  if (answers.pgn) okHeaders.push('Content-Disposition');
  if (answers.ndjson) okHeaders.push('X-Changes-Cursor');
  // Only on some answers: Link when there is another page, Content-Disposition on PGN, X-Total-Count on
  // JSON where PGN can be asked for or where a bounded total may take its place.
  const sometimes: HeaderName[] = [
    'Link',
    'Content-Disposition',
    'X-Changes-Cursor',
    'X-Total-Count-Exceeds',
    ...(answers.pgn || answers.total === 'bounded' ? ['X-Total-Count' as const] : []),
  ];
  const content: Record<string, { schema: object }> = { 'application/json': { schema: answers.ok.schema } };
  if (answers.pgn) content[`${PGN_MEDIA_TYPE}`] = { schema: { type: 'string', description: answers.pgn } };
  if (answers.ndjson)
    // A stream of JSON texts: its schema is each line's (OpenAPI 3.2 names that itemSchema).
    content[NDJSON_MEDIA_TYPE] = {
      schema: { description: answers.ndjson, allOf: [{ $ref: 'GameDetail#' }] },
    };
  return {
    200: {
      description: answers.ok.description,
      headers: headers(
        okHeaders,
        okHeaders.filter((name) => !sometimes.includes(name)),
      ),
      content,
    },
    304: {
      description:
        'Not Modified: If-None-Match named the current ETag (any content coding of it, or *). No body.',
      // A list's 304 carries its Link and X-Total-Count too, as its 200 would.
      headers: headers(
        [
          ...COUNTED,
          'ETag',
          ...CACHING,
          ...(answers.paged ? (['Link'] as const) : []),
          ...(answers.total ? (['X-Total-Count'] as const) : []),
          ...(answers.total === 'bounded' ? (['X-Total-Count-Exceeds'] as const) : []),
        ],
        [...COUNTED, 'ETag', ...CACHING],
      ),
      type: 'null',
    },
    400: errorEntry(
      'invalid_request: a query parameter is unknown, repeated, empty, not plain decimal digits or out of ' +
        'range, or its value is not accepted; the description names the parameter and its range. Also a ' +
        'request with more than one Authorization header (RFC 6750 section 3.1), checked before the ' +
        'token, with a WWW-Authenticate challenge saying error="invalid_request".',
      'invalid_request',
      'limit must be an integer from 1 to 200',
      // A request the server refuses before any route (no Host header) has none of the route's headers.
      [...COUNTED, ...CACHING, 'WWW-Authenticate'],
      ['X-Request-Id'],
    ),
    401: errorEntry(
      'invalid_token: the access token is missing, malformed, unknown, revoked or expired. Nothing else ' +
        'about the request is checked first. Authorize again.',
      'invalid_token',
      'The access token is invalid or has been revoked.',
      [...COUNTED, ...CACHING, 'WWW-Authenticate'],
    ),
    403: errorEntry(
      'insufficient_scope: the token lacks the scope this operation needs.',
      'insufficient_scope',
      'The access token lacks the games.read scope.',
      [...COUNTED, ...CACHING, 'WWW-Authenticate'],
    ),
    ...(answers.notFound && {
      404: errorEntry(
        'not_found: the id is malformed, unknown, deleted or another user’s; these cases are ' +
          'indistinguishable.',
        'not_found',
        'The game does not exist or is not owned by the user.',
        [...COUNTED, ...CACHING],
      ),
    }),
    429: errorEntry(
      'rate_limited: the window’s requests are used up (per app and user; per client address without a ' +
        'valid token). Wait Retry-After seconds, then retry. On a heavy request (the database PGN export), ' +
        'also: the app and user already run as many of its kind at once as they may, across every ' +
        'instance; the description names the limit. Retry when one of them has ended.',
      'rate_limited',
      'Too many requests: the limit is 600 per 60 s for each app and user. Retry in 12 s.',
      [...COUNTED, ...CACHING, 'Retry-After'],
    ),
    500: errorEntry(
      'server_error: a fault in the server. Bad input never causes one.',
      'server_error',
      'The server failed to answer the request.',
      [...COUNTED, ...CACHING],
      ['X-Request-Id'],
    ),
    503: errorEntry(
      'unavailable: the store is locked or unreachable right now. On a heavy request (the database PGN ' +
        'export), also: the instance runs as many of its kind as it takes at once, or it is overloaded and ' +
        'sheds heavy requests while light ones are still answered. Wait Retry-After seconds, then retry.',
      'unavailable',
      'The service cannot reach its store right now: retry shortly.',
      // The token is looked up in the store before the request is counted: no rate-limit headers then.
      [...COUNTED, ...CACHING, 'Retry-After'],
      ['X-Request-Id', ...CACHING, 'Retry-After'],
    ),
  };
}

/**
 * The answers of a path's OPTIONS operation: 204 with Allow, and the refusals that come before any operation
 * (the request is not valid HTTP, too slow, its head too large, or it expects what the server cannot meet).
 */
export function optionsResponses(allow: string): Record<string, object> {
  return {
    204: {
      description: 'No Content, naming the methods in Allow.',
      headers: {
        Allow: required(header('string', 'The methods the path answers.', { const: allow })),
        'X-Request-Id': required(HEADERS['X-Request-Id']),
        Vary: HEADERS.Vary,
      },
      type: 'null',
    },
    '4XX': errorEntry(
      'invalid_request, before any operation, on any path and with any method: 400 for a request that is ' +
        'not valid HTTP, 408 for one not received within the request timeout, 417 for an Expect other ' +
        'than 100-continue, 431 for headers too large. After a 400, 408 or 431 the connection closes.',
      'invalid_request',
      'The Expect header asks for what the server cannot do: only 100-continue is understood.',
      ['X-Request-Id'],
    ),
  };
}

// The parts of the OpenAPI document that no route schema holds: info, servers, tags, the security scheme,
// and the decisions a client depends on (docs/design.md, docs/api.md "API decisions"), in the description text.
import packageJson from '../../../package.json' with { type: 'json' };
import { SCOPES, type Scope } from '../../domain/scopes.ts';

export const SECURITY_SCHEME = 'bearer';

/** The OAuth 2.0 flows that issue the bearer tokens (docs/oauth.md): each operation accepts either. */
export const OAUTH_SCHEME = 'oauth2';

export const TAGS = {
  User: 'The user behind the token.',
  Databases: 'The user’s game databases; a database’s games as JSON pages or as one PGN file.',
  Games: 'Games across all databases: lightweight pages, full detail, PGN.',
  'Changes feed': 'The incremental feed: the recommended way to keep an external copy current.',
} as const;

export type Tag = keyof typeof TAGS;

const SCOPE_USES: Record<Scope, string> = {
  'user.read': 'GET /api/v1/me',
  'databases.read': 'GET /api/v1/databases',
  'games.read': 'GET /api/v1/games, /api/v1/games/{id}, /api/v1/databases/{id}/games, /api/v1/changes',
};

const DESCRIPTION = `
A read-only HTTP/JSON API through which another app takes over a user's chess games: lists, full game
detail, PGN exports and an incremental changes feed. Every answer is limited to the user behind the token.
The reference page is served at \`/docs\`, this document at \`/api/v1/openapi.json\` (neither needs a token
or counts against the rate limit).

## Keeping a copy current

Follow \`GET /api/v1/changes\`: the first run without \`cursor\` backfills everything (or starts at
\`since\`); follow \`nextCursor\` until \`hasMore\` is false, and store the cursor only after the page's data
is safely written. Every write to a game (import, update, move, delete) moves it to the end of the feed,
once, in its latest state. Deleted games stay as tombstones (\`deleted: true\`, with their last names and
result) and are 404 everywhere else. Fetch changed games with \`GET /api/v1/games/{id}\` (JSON or PGN), or
ask for them with the page: \`expand=game\` gives every item its game's detail (\`null\` for a deleted
game), up to 500 in one request.
The cursor comes on every page, also an empty one, so it stays usable; cursors do not expire. They are
encrypted and authenticated, reveal nothing, and are bound to the user as one app sees them: another user's
or app's cursor, one from another server secret, or an altered one is 400 (after a server secret rotation,
restart with \`since\`).

## Shapes

- Every documented field is always present. An unknown value is \`null\`, never omitted and never \`"?"\`.
- Timestamps are ISO 8601 UTC with milliseconds (\`2026-11-21T06:13:00.000Z\`).
- One player reference everywhere: \`{name, elo, fideId, country}\`.
- \`/api/v1/me\`'s \`id\` is pairwise: stable for one app, different for every app, never the internal id.

## Paging and parameters

Lists are in import order, oldest first, stable under new imports, so offset paging never shows a game
twice. Follow the \`Link\` header (RFC 8288, root-relative targets): \`rel="next"\` and \`rel="last"\`
while more pages exist, \`rel="prev"\` after the first page. \`X-Total-Count\` gives the length of the
whole list (\`/databases\` too), and each database its \`gameCount\`; a filtered game list with more
matches than the server counts (1,000 by default) says \`X-Total-Count-Exceeds: 1000\` instead, and no
\`rel="last"\`. Parameters are strict: \`limit\` and \`offset\` must be plain decimal
integers in range, and an unknown, repeated or empty parameter is 400 \`invalid_request\` naming it; nothing
is clamped or ignored.

## PGN

\`format=pgn\`, or an \`Accept\` header whose most preferred type is \`application/x-chess-pgn\` or
\`application/vnd.chess-pgn\`, gives \`application/x-chess-pgn; charset=utf-8\` with
\`Content-Disposition: attachment; filename="<slug>.pgn"\`. A database's export is streamed and always holds
every game, so \`limit\`/\`offset\` with it are 400; \`gameIds=true\` writes each game's id in a
\`[ChessportGameId "<uuid>"]\` tag after the Seven Tag Roster.

## Errors

Always JSON \`{error, error_description}\` (schema ErrorBody), never a stack trace: 400 \`invalid_request\`,
401 \`invalid_token\`, 403 \`insufficient_scope\`, 404 \`not_found\`, 405 \`method_not_allowed\`,
429 \`rate_limited\`, 500 \`server_error\`, 503 \`unavailable\`. Authentication is checked before anything
about the user, the resource or the parameters. 401 and 403 carry an RFC 6750 \`WWW-Authenticate\` challenge,
as does the 400 of a request with more than one \`Authorization\` header (RFC 6750 section 3.1).
Before any operation, on any path, a request that is not valid HTTP (also one with two \`Host\` lines,
one whose \`Host\` is not a host, and one in HTTP/1.1 without \`Host\`) is 400, one not received within
the server's request timeout (30 s by default) 408, and one whose headers are too large 431: all
\`invalid_request\` in the same shape, with \`X-Request-Id\` and \`Connection: close\`, after the answers
to the requests before it on the connection. An \`Expect\` other than \`100-continue\` is 417
\`invalid_request\`.

## Methods

Every path answers GET, \`HEAD\` (the same status and headers, no body) and \`OPTIONS\` (204 with
\`Allow: GET, HEAD, OPTIONS\`, without a token), each an operation here. Every other method (POST, PUT,
PATCH, DELETE, QUERY, TRACE, PROPFIND, ...) on an API path is 405 \`method_not_allowed\` with
\`Allow: GET, HEAD, OPTIONS\`, before authentication and before any body is read; so is CONNECT, on any target, and
then the connection closes. CORS preflights are answered before authentication (any origin, no
credentials). Those two answers have no operation (one that never succeeds would give generated clients
methods that always fail): they are in the \`x-other-methods\` extension at the root of this document.
Unknown paths are 404 \`not_found\`, with any method and without a token.

## Rate limits and caching

Per app and user (all tokens of one app and user share one budget), and per client address for requests
without a valid token. Every counted answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`,
\`X-RateLimit-Reset\` and the IETF draft's \`RateLimit-Policy\` and \`RateLimit\`; 429 and 503 add
\`Retry-After\` (seconds). Every 200 carries a strong \`ETag\` and \`Cache-Control: private, no-cache\`;
\`If-None-Match\` gives 304, on the feed and the PGN export too. A 304 is counted when it comes in; it is
given back (its \`X-RateLimit-Remaining\` shows it unspent) when it named the current tag of the PGN export
or of a game-list page the instance keeps, up to the limit of such 304s per window: never for
\`If-None-Match: *\`, nor for the other answers, which cost the server as much as a 200.
Answers are compressed (gzip, br) when asked.
`.trim();

const SCHEME_DESCRIPTION = `
Opaque bearer token in the Authorization header (\`Authorization: Bearer cp_...\`; the scheme name is
case-insensitive; never in the query string). A token belongs to one user and one app, carries scopes and
may expire or be revoked. Each operation lists the scope it needs:

${SCOPES.map((scope) => `- \`${scope}\`: ${SCOPE_USES[scope]}`).join('\n')}
`.trim();

const OAUTH_DESCRIPTION = `
The tokens of the bearer scheme, obtained by an app through OAuth 2.0 rather than from the operator: the
authorization code flow with PKCE (S256, required of every client) for web and native apps, and the device
authorization grant (RFC 8628; \`x-deviceAuthorization\`) for command-line tools and TVs. Access tokens last
an hour by default; refresh tokens rotate, and a rotated one used again revokes the grant. The server's
metadata is at \`/.well-known/oauth-authorization-server\` (RFC 8414); every 401 names
\`/.well-known/oauth-protected-resource\` (RFC 9728) in its \`WWW-Authenticate\` challenge. Apps are
registered by the operator (\`chessport apps add <name> --redirect-uri <uri>\`).
`.trim();

export const openapiBase = {
  openapi: '3.1.0',
  info: {
    title: 'chessport API',
    version: packageJson.version,
    summary: 'Take over a user’s chess games: lists, detail, PGN and a changes feed.',
    description: DESCRIPTION,
    license: { name: 'GPL-3.0-or-later', identifier: 'GPL-3.0-or-later' },
  },
  servers: [{ url: '/', description: 'The server that serves this document.' }],
  tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  components: {
    securitySchemes: {
      [SECURITY_SCHEME]: { type: 'http' as const, scheme: 'bearer', description: SCHEME_DESCRIPTION },
      [OAUTH_SCHEME]: {
        type: 'oauth2' as const,
        description: OAUTH_DESCRIPTION,
        flows: {
          authorizationCode: {
            authorizationUrl: '/oauth/authorize',
            tokenUrl: '/oauth/token',
            refreshUrl: '/oauth/token',
            scopes: SCOPE_USES,
          },
          // OpenAPI 3.1 has no device flow: its endpoints, as OpenAPI 3.2 names them.
          'x-deviceAuthorization': {
            deviceAuthorizationUrl: '/oauth/device/auth',
            tokenUrl: '/oauth/token',
            scopes: SCOPE_USES,
          },
        },
      },
    },
  },
};

type Json = { [key: string]: unknown };

/** Names of the answers that are the same on every operation, in components/responses. */
const SHARED_RESPONSES: Record<string, string> = {
  204: 'Allowed',
  304: 'NotModified',
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  429: 'TooManyRequests',
  500: 'ServerError',
  503: 'Unavailable',
  '4XX': 'RefusedRequest',
};

/**
 * The components/responses name of an answer: a list page's 304 carries Link and X-Total-Count, an unpaged
 * list's X-Total-Count, the others' neither.
 */
function sharedName(status: string, response: Json): string | undefined {
  const name = SHARED_RESPONSES[status];
  const headers = response.headers as Json | undefined;
  if (status === '304' && headers?.Link) return `${name}Page`;
  if (status === '304' && headers?.['X-Total-Count']) return `${name}List`;
  return name;
}

function responsesOf(document: Json): Record<string, Json>[] {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  return Object.values(paths).flatMap((operations) =>
    Object.values(operations).map((operation) => (operation.responses ?? {}) as Record<string, Json>),
  );
}

/** The last touches @fastify/swagger cannot make from route schemas (see the steps), and extensions. */
export function finishDocument(document: Json, extensions: Record<`x-${string}`, unknown> = {}): Json {
  describeHead(document);
  liftRequiredHeaders(document);
  shareHeaders(document);
  shareResponses(document);
  return Object.assign(document, extensions);
}

/**
 * @fastify/swagger gives a HEAD route the GET route's schema and operationId with `-head`: here the operation
 * is named in the GET one's style, says what it is, and its 200 has no body (the answers with an error body
 * are shared with GET's and name the body GET would carry).
 */
function describeHead(document: Json): void {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, Json>>)) {
    const { get, head } = item;
    if (!get || !head) continue;
    const responses = { ...(head.responses as Record<string, Json>) };
    const { content: _, ...ok } = responses['200'] ?? {};
    item.head = {
      ...head,
      operationId: `${String(get.operationId)}Head`,
      summary: `${String(get.summary).replace(/\.$/, '')}: the headers only (HEAD).`,
      description:
        'The status and headers GET answers, without the body (RFC 9110 9.3.2): to revalidate an ETag, or ' +
        'read the rate limit or a list’s X-Total-Count, without the transfer. Counted by the rate limit as ' +
        'GET is.',
      responses: { ...responses, 200: ok },
    };
  }
}

/**
 * @fastify/swagger copies a response header's schema as it is; our route schemas mark a header that is on
 * every answer of its status with `required: true` in that schema, which OpenAPI wants on the header object.
 */
function liftRequiredHeaders(document: Json): void {
  for (const responses of responsesOf(document)) {
    for (const response of Object.values(responses)) {
      for (const object of Object.values((response.headers ?? {}) as Record<string, Json>)) {
        const schema = object.schema as Json | undefined;
        if (schema?.required === true) {
          delete schema.required;
          object.required = true;
        }
      }
    }
  }
}

/**
 * Each header is described once, in components/headers, and referenced from every answer that carries it.
 * A Reference Object cannot say `required`, so a header that some answers always carry and others only
 * may (the rate-limit headers of a 400, which can come before the request is counted) has two entries:
 * `X-RateLimit-Limit` and `X-RateLimit-Limit.optional`. A name with other differences stays inline.
 */
function shareHeaders(document: Json): void {
  const answers = responsesOf(document).flatMap((responses) => Object.values(responses));
  const variants = new Map<string, Map<string, Json>>();
  for (const answer of answers) {
    for (const [name, header] of Object.entries((answer.headers ?? {}) as Record<string, Json>)) {
      const texts = variants.get(name) ?? new Map<string, Json>();
      texts.set(JSON.stringify(header), header);
      variants.set(name, texts);
    }
  }
  const components = (document.components ?? {}) as Json;
  const shared = (components.headers ?? {}) as Record<string, Json>;
  const keys = new Map<string, string>(); // name and header text -> components/headers key
  for (const [name, texts] of variants) {
    const all = [...texts.entries()];
    const required = all.filter(([, header]) => header.required === true);
    const optional = all.filter(([, header]) => header.required !== true);
    if (required.length > 1 || optional.length > 1) continue;
    const [requiredText, requiredHeader] = required[0] ?? [];
    const [optionalText, optionalHeader] = optional[0] ?? [];
    if (requiredText && optionalText) {
      const { required: _, ...rest } = requiredHeader as Json;
      if (JSON.stringify(rest) !== optionalText) continue;
    }
    if (requiredText) {
      shared[name] = requiredHeader as Json;
      keys.set(`${name}\n${requiredText}`, name);
    }
    if (optionalText) {
      const key = requiredText ? `${name}.optional` : name;
      shared[key] = optionalHeader as Json;
      keys.set(`${name}\n${optionalText}`, key);
    }
  }
  for (const answer of answers) {
    const headers = (answer.headers ?? {}) as Record<string, Json>;
    for (const [name, header] of Object.entries(headers)) {
      const key = keys.get(`${name}\n${JSON.stringify(header)}`);
      if (key) headers[name] = { $ref: `#/components/headers/${key}` };
    }
  }
  components.headers = shared;
  document.components = components;
}

/**
 * Every route schema spells out its error and 304 answers (Fastify serialises with them), so the generated
 * document repeats them per operation; identical ones become one named components/responses entry.
 */
function shareResponses(document: Json): void {
  const all = responsesOf(document);
  const components = (document.components ?? {}) as Json;
  const shared = (components.responses ?? {}) as Record<string, Json>;
  const owners = new Map<string, { status: string; responses: Record<string, Json> }[]>();
  for (const responses of all) {
    for (const [status, response] of Object.entries(responses)) {
      const name = sharedName(status, response);
      if (name) owners.set(name, [...(owners.get(name) ?? []), { status, responses }]);
    }
  }
  for (const [name, group] of owners) {
    const texts = new Set(group.map(({ status, responses }) => JSON.stringify(responses[status])));
    if (texts.size !== 1) continue;
    const [first] = group;
    if (first) shared[name] = first.responses[first.status] as Json;
    for (const { status, responses } of group) responses[status] = { $ref: `#/components/responses/${name}` };
  }
  components.responses = shared;
  document.components = components;
}

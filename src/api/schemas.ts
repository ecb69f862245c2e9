// JSON Schemas of every request and response: one source for validation, serialisation and the OpenAPI
// document (src/api/openapi). Every documented field is always present; unknown values are null
// (docs/design.md 1). The schemas with an $id become the document's components/schemas.
import { ERROR_CODES } from '../platform/http/errors.ts';

const nullable = (type: 'string' | 'integer', description: string, extra: Record<string, unknown> = {}) =>
  ({ type: [type, 'null'], description, ...extra }) as const;

const timestamp = (description: string) =>
  ({
    type: 'string',
    format: 'date-time',
    description: `${description} ISO 8601, UTC, milliseconds.`,
    examples: ['2026-11-21T06:13:00.000Z'],
  }) as const;

const RESULTS = ['1-0', '0-1', '1/2-1/2', '*'] as const;

// Named ErrorBody, not Error: a schema named Error becomes a type that shadows JavaScript's Error in generated
// TypeScript clients.
export const errorSchema = {
  $id: 'ErrorBody',
  type: 'object',
  description: 'The one error shape of the API: every answer other than 2xx and 304 carries it, always JSON.',
  required: ['error', 'error_description'],
  properties: {
    error: {
      type: 'string',
      description:
        'Machine-readable error code: invalid_request (400; 408, 417 and 431 before any operation), invalid_token (401), insufficient_scope (403), ' +
        'not_found (404), method_not_allowed (405), rate_limited (429), server_error (500), unavailable (503).',
      enum: ERROR_CODES,
    },
    error_description: {
      type: 'string',
      description: 'Human-readable explanation for developers; wording may change, so match on error.',
    },
  },
} as const;

export const playerSchema = {
  $id: 'Player',
  type: 'object',
  description:
    'A player reference, the same shape everywhere (list, database games, feed, detail). Unknown values, ' +
    'such as the PGN placeholder "?", are null.',
  required: ['name', 'elo', 'fideId', 'country'],
  properties: {
    name: nullable('string', 'Player name from the White/Black tag.', { examples: ['Anderssen, Adolf'] }),
    elo: nullable('integer', 'Rating from the WhiteElo/BlackElo tag.'),
    fideId: nullable('string', 'FIDE id (digits) from the WhiteFideId/BlackFideId tag.', {
      pattern: '^[0-9]+$',
    }),
    country: nullable(
      'string',
      'Three upper-case letters from WhiteFed/BlackFed, or from WhiteCountry/BlackCountry when that is ' +
        'a 3-letter code.',
      { pattern: '^[A-Z]{3}$' },
    ),
  },
} as const;

export const userSchema = {
  $id: 'User',
  type: 'object',
  description: 'The user behind the access token.',
  required: ['id', 'name', 'email', 'image'],
  properties: {
    id: {
      type: 'string',
      format: 'uuid',
      description:
        'Pairwise pseudonymous id (HMAC of the user under the app, shaped as an RFC 9562 version-8 UUID): ' +
        'stable for every token of one app, different for every app, never the internal id or the login. ' +
        'Use it as the user key in your system.',
    },
    name: nullable('string', "User's display name."),
    email: nullable('string', "User's e-mail address."),
    image: nullable('string', "URL of the user's image."),
  },
} as const;

export const databaseSchema = {
  $id: 'Database',
  type: 'object',
  description: 'A collection of games owned by the user.',
  required: ['id', 'name', 'slug', 'private', 'maxGames', 'gameCount', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Database UUID.' },
    name: { type: 'string', description: 'Database name.' },
    slug: {
      type: 'string',
      description: 'Usable in place of the id in paths; unique among the user’s databases.',
      examples: ['classics'],
    },
    private: { type: 'boolean', description: 'Whether the database is private.' },
    maxGames: nullable('integer', 'Maximum number of games the database takes; null when unlimited.'),
    gameCount: {
      type: 'integer',
      minimum: 0,
      description:
        'Number of games in the database now (deleted ones not counted): the total its list of games ' +
        'gives in X-Total-Count.',
    },
    createdAt: timestamp('Creation time.'),
    updatedAt: timestamp('Time of the last change to the database or its games.'),
  },
} as const;

const gameSummaryProperties = {
  id: { type: 'string', format: 'uuid', description: 'Game UUID.' },
  slug: {
    type: 'string',
    // In a code span: the reference page renders descriptions as Markdown, where <white> is an HTML tag.
    description:
      'Readable, unique slug: `<white>-vs-<black>-<year>-<12 hex of the id>`, without `<year>-` when the ' +
      'Date tag has no year.',
    examples: ['anderssen-vs-kieseritzky-1851-0193c0de4f2a'],
  },
  databaseId: { type: 'string', format: 'uuid', description: 'Id of the containing database.' },
  event: nullable('string', 'Event tag; null when unknown.'),
  date: nullable('string', 'Game date YYYY-MM-DD; null unless the PGN Date is a complete, real date.', {
    format: 'date',
  }),
  result: { type: 'string', enum: RESULTS, description: 'Result in PGN notation (* while unknown).' },
  eco: nullable('string', 'ECO opening code A00..E99; null when unknown.', { pattern: '^[A-E][0-9]{2}$' }),
  white: { $ref: 'Player#' },
  black: { $ref: 'Player#' },
} as const;

export const gameSummarySchema = {
  $id: 'GameSummary',
  type: 'object',
  description: 'A game list item: no moves and no PGN.',
  required: Object.keys(gameSummaryProperties),
  properties: gameSummaryProperties,
} as const;

export const gameDetailSchema = {
  $id: 'GameDetail',
  type: 'object',
  description: 'One game with full data: every list item field, plus enough to mirror the game.',
  required: [...Object.keys(gameSummaryProperties), 'fen', 'moves', 'pgn', 'metadata', 'updatedAt'],
  properties: {
    ...gameSummaryProperties,
    fen: {
      type: 'string',
      description:
        'FEN of the position after the last move of the main line. The en passant square is written only ' +
        'when an en passant capture is legal in that position (else -, also right after a two-square pawn ' +
        'move); castling rights as KQkq for the outermost rooks and as a rook’s file letter otherwise ' +
        '(X-FEN, Chess960); the halfmove clock counts on past 150.',
      examples: ['rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1'],
    },
    moves: {
      type: 'string',
      description:
        'Main line in UCI notation, separated by single spaces (e2e4, promotion e7e8q, castling e1g1; ' +
        'in Chess960 king-takes-rook e1h1); empty without moves.',
      examples: ['e2e4 e7e5 g1f3'],
    },
    pgn: {
      type: 'string',
      description:
        'The game in PGN export format: Seven Tag Roster first, other tags in ASCII order, comments, ' +
        'NAGs and variations kept, lines under 80 characters.',
    },
    metadata: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'Tag pairs without a field of their own (Site, Round, TimeControl, Annotator, FEN, SetUp, custom ' +
        'tags ...), tag name to text value.',
      examples: [{ Site: 'London', Round: '1' }],
    },
    updatedAt: timestamp('Time of the last change to the game.'),
  },
} as const;

export const changeItemSchema = {
  $id: 'Change',
  type: 'object',
  description:
    'One changed game in its latest state. A deleted game is a tombstone (deleted: true) that keeps its ' +
    'last names and result; fetch the others with GET /api/v1/games/{id}, or ask for them with the page ' +
    '(expand=game).',
  required: ['id', 'databaseId', 'updatedAt', 'deleted', 'white', 'black', 'result'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Game UUID.' },
    databaseId: {
      type: 'string',
      format: 'uuid',
      description: 'Id of the containing database (after a move: the new one).',
    },
    updatedAt: timestamp('Time of the last change to the game.'),
    deleted: { type: 'boolean', description: 'true for a deleted game (a tombstone).' },
    white: { $ref: 'Player#' },
    black: { $ref: 'Player#' },
    result: { type: 'string', enum: RESULTS, description: 'Result in PGN notation.' },
    game: {
      description:
        'Only with expand=game, and then on every item: the game as GET /api/v1/games/{id} gives it ' +
        '(its data), from the same snapshot as the item; null for a deleted game.',
      anyOf: [{ type: 'null' }, { $ref: 'GameDetail#' }],
    },
  },
} as const;

export const sharedSchemas = [
  errorSchema,
  playerSchema,
  userSchema,
  databaseSchema,
  gameSummarySchema,
  gameDetailSchema,
  changeItemSchema,
] as const;

const envelope = (description: string, data: Record<string, unknown>) =>
  ({ type: 'object', description, required: ['data'], properties: { data } }) as const;

/** The JSON bodies of the 200 answers. */
export const schemas = {
  me: envelope('The user.', { $ref: 'User#' }),
  databases: envelope('The databases, in creation order.', {
    type: 'array',
    description: 'Every database of the user.',
    items: { $ref: 'Database#' },
  }),
  gameList: envelope('One page of games.', {
    type: 'array',
    description:
      'Games in import order, oldest first. On GET /api/v1/games?ids=: the games named, in the order given, ' +
      'each a full game detail (GameDetail, which holds every GameSummary field).',
    items: { $ref: 'GameSummary#' },
  }),
  gameDetail: envelope('The game.', { $ref: 'GameDetail#' }),
  changes: {
    type: 'object',
    description: 'One page of the changes feed.',
    required: ['data', 'nextCursor', 'hasMore'],
    properties: {
      data: {
        type: 'array',
        description: 'Changed games in change order, each once, in its latest state.',
        items: { $ref: 'Change#' },
      },
      nextCursor: {
        type: 'string',
        description:
          'Opaque position after this page, also on an empty page (then it is the position you sent): ' +
          'pass it as cursor next time. Store it only after the page’s data is safely written.',
      },
      hasMore: {
        type: 'boolean',
        description: 'Whether more changes exist right now after nextCursor: if true, fetch the next page.',
      },
    },
  },
} as const;

// Query parameters. Integers are additionally checked for plain decimal digits before validation, so that
// Ajv's coercion cannot let " 10", "1e2" or "0x10" through (see params.ts).
export const pageQuery = (defaultLimit: number, maxLimit: number) =>
  ({
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: maxLimit,
      default: defaultLimit,
      description: `Items per page, 1 to ${maxLimit}, plain decimal digits.`,
    },
    offset: {
      type: 'integer',
      minimum: 0,
      // The largest integer a JavaScript number holds exactly: larger ones would be rounded, not refused.
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'Number of items to skip, plain decimal digits. Prefer following the Link header.',
    },
  }) as const;

export const formatParam = {
  type: 'string',
  enum: ['pgn'],
  description:
    'pgn returns PGN text (application/x-chess-pgn) instead of JSON, as does an Accept header that ' +
    'prefers application/x-chess-pgn or application/vnd.chess-pgn. Any other value is 400.',
} as const;

export const exportFormatParam = {
  type: 'string',
  enum: ['pgn', 'ndjson'],
  description:
    'pgn returns every game as one PGN file (application/x-chess-pgn), ndjson as NDJSON ' +
    '(application/x-ndjson: one game detail, as GET /api/v1/games/{id} gives its data, a line), instead of ' +
    'one JSON page; as does an Accept header that prefers application/x-chess-pgn, ' +
    'application/vnd.chess-pgn or application/x-ndjson. Any other value is 400.',
} as const;

/** The most game ids one request of GET /games?ids= may name. */
export const MAX_IDS = 200;

export const idsParam = {
  type: 'string',
  minLength: 1,
  description:
    `1 to ${MAX_IDS} game UUIDs (letters in either case), separated by commas: the answer is those of the ` +
    'user’s live games, each a full game detail, in the order given (a repeated id once, where it first ' +
    'appears); another user’s, deleted and unknown ids are left out alike. With format=pgn, those games as ' +
    'one PGN file. Not with limit, offset, the filters or format=ndjson (400).',
} as const;

export const gameIdsParam = {
  type: 'boolean',
  description:
    'PGN export only: true writes each game’s id in a tag, [ChessportGameId "<uuid>"], right after the ' +
    'Seven Tag Roster, so that the file can be joined to the feed and the JSON answers. true or false; ' +
    'anything else, or the parameter without a PGN answer, is 400.',
} as const;

/** The longest a request of the changes feed may wait for a change (wait=), in seconds. */
export const MAX_WAIT_SECONDS = 60;

export const changesQuery = {
  cursor: {
    type: 'string',
    description:
      'nextCursor of the previous page, unchanged (an encrypted position, bound to this user and app). Not ' +
      'together with since. A cursor of another user, app or server, or altered, is 400.',
  },
  since: {
    type: 'string',
    format: 'date-time',
    description:
      'First run only: start at the changes made at or after this time, RFC 3339 with a zone ' +
      '(2026-11-21T06:13:00.000Z, or +02:00 written %2B02:00). Without cursor and since the feed starts ' +
      'at the beginning (full backfill).',
    examples: ['2026-11-21T06:13:00.000Z'],
  },
  limit: { ...pageQuery(100, 500).limit, description: 'Changes per page, 1 to 500, plain decimal digits.' },
  expand: {
    type: 'string',
    enum: ['game'],
    description:
      'game: every item carries game, the game’s detail as GET /api/v1/games/{id} gives it (null for a ' +
      'deleted game), so that a page of up to 500 changes is one request. Any other value is 400.',
  },
  wait: {
    type: 'integer',
    minimum: 1,
    maximum: MAX_WAIT_SECONDS,
    description:
      `Long-poll: seconds to wait, 1 to ${MAX_WAIT_SECONDS}, plain decimal digits. When the page would be ` +
      'empty, the answer waits until a change of the user commits (then it comes at once, with that change) ' +
      'or the time is up (an empty page, its nextCursor as without wait). A page with changes is answered ' +
      'at once. A server shutting down answers a waiting request at once with its empty page. One request, ' +
      'one unit of the rate limit, however long it waits.',
  },
} as const;

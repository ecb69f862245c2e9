// JSON Schemas of every request and response: one source for validation, serialisation and the OpenAPI
// document. Every documented field is always present; unknown values are null (DESIGN.md 1).

const nullable = (type: 'string' | 'integer', description: string, extra: Record<string, unknown> = {}) =>
  ({ type: [type, 'null'], description, ...extra }) as const;

const timestamp = (description: string) =>
  ({
    type: 'string',
    format: 'date-time',
    description: `${description} ISO 8601, UTC, milliseconds.`,
  }) as const;

export const errorSchema = {
  $id: 'Error',
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: {
      type: 'string',
      description: 'Machine-readable error code.',
      enum: [
        'invalid_request',
        'invalid_token',
        'insufficient_scope',
        'not_found',
        'method_not_allowed',
        'rate_limited',
        'server_error',
        'unavailable',
      ],
    },
    error_description: { type: 'string', description: 'Human-readable explanation.' },
  },
} as const;

export const playerSchema = {
  $id: 'Player',
  type: 'object',
  required: ['name', 'elo', 'fideId', 'country'],
  properties: {
    name: nullable('string', 'Player name from the White/Black tag.'),
    elo: nullable('integer', 'Rating from the WhiteElo/BlackElo tag.'),
    fideId: nullable('string', 'FIDE id (digits) from the WhiteFideId/BlackFideId tag.'),
    country: nullable(
      'string',
      'Three-letter federation code from WhiteFed/BlackFed (or WhiteCountry/BlackCountry).',
      {
        pattern: '^[A-Z]{3}$',
      },
    ),
  },
} as const;

export const userSchema = {
  $id: 'User',
  type: 'object',
  required: ['id', 'name', 'email', 'image'],
  properties: {
    id: {
      type: 'string',
      format: 'uuid',
      description:
        'Pairwise pseudonymous id: stable for one app, different for every app, never the internal id.',
    },
    name: nullable('string', "User's display name."),
    email: nullable('string', "User's e-mail address."),
    image: nullable('string', "URL of the user's image."),
  },
} as const;

export const databaseSchema = {
  $id: 'Database',
  type: 'object',
  required: ['id', 'name', 'slug', 'private', 'maxGames', 'createdAt', 'updatedAt'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Database UUID.' },
    name: { type: 'string', description: 'Database name.' },
    slug: { type: 'string', description: 'Usable in place of the id in paths.' },
    private: { type: 'boolean', description: 'Whether the database is private.' },
    maxGames: nullable('integer', 'Maximum number of games the database takes; null when unlimited.'),
    createdAt: timestamp('Creation time.'),
    updatedAt: timestamp('Time of the last change to the database or its games.'),
  },
} as const;

const gameSummaryProperties = {
  id: { type: 'string', format: 'uuid', description: 'Game UUID.' },
  slug: { type: 'string', description: 'Readable, unique slug of the game.' },
  databaseId: { type: 'string', format: 'uuid', description: 'Id of the containing database.' },
  event: nullable('string', 'Event tag.'),
  date: nullable('string', 'Game date YYYY-MM-DD; null when the PGN date is incomplete.', { format: 'date' }),
  result: { type: 'string', enum: ['1-0', '0-1', '1/2-1/2', '*'], description: 'Result in PGN notation.' },
  eco: nullable('string', 'ECO opening code A00..E99.', { pattern: '^[A-E][0-9]{2}$' }),
  white: { $ref: 'Player#' },
  black: { $ref: 'Player#' },
} as const;

export const gameSummarySchema = {
  $id: 'GameSummary',
  type: 'object',
  required: Object.keys(gameSummaryProperties),
  properties: gameSummaryProperties,
} as const;

export const gameDetailSchema = {
  $id: 'GameDetail',
  type: 'object',
  required: [...Object.keys(gameSummaryProperties), 'fen', 'moves', 'pgn', 'metadata', 'updatedAt'],
  properties: {
    ...gameSummaryProperties,
    fen: { type: 'string', description: 'FEN of the position after the last move of the main line.' },
    moves: {
      type: 'string',
      description: 'Main line in UCI coordinate notation, separated by single spaces; empty without moves.',
    },
    pgn: { type: 'string', description: 'The game in PGN export format, including the extra tags.' },
    metadata: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'Tag pairs without a field of their own (Site, Round, TimeControl, FEN, ...).',
    },
    updatedAt: timestamp('Time of the last change to the game.'),
  },
} as const;

export const sharedSchemas = [
  errorSchema,
  playerSchema,
  userSchema,
  databaseSchema,
  gameSummarySchema,
  gameDetailSchema,
] as const;

const envelope = (data: Record<string, unknown>) =>
  ({ type: 'object', required: ['data'], properties: { data } }) as const;

export const errorResponses = {
  400: { $ref: 'Error#' },
  401: { $ref: 'Error#' },
  403: { $ref: 'Error#' },
  404: { $ref: 'Error#' },
  429: { $ref: 'Error#' },
  503: { $ref: 'Error#' },
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
      description: `Items per page, 1 to ${maxLimit}.`,
    },
    offset: { type: 'integer', minimum: 0, default: 0, description: 'Number of items to skip.' },
  }) as const;

export const formatParam = {
  type: 'string',
  enum: ['pgn'],
  description: 'pgn returns PGN text instead of JSON (as does Accept: application/x-chess-pgn).',
} as const;

export const schemas = {
  me: { response: { 200: envelope({ $ref: 'User#' }) } },
  databases: { response: { 200: envelope({ type: 'array', items: { $ref: 'Database#' } }) } },
  gameList: { response: { 200: envelope({ type: 'array', items: { $ref: 'GameSummary#' } }) } },
  gameDetail: { response: { 200: envelope({ $ref: 'GameDetail#' }) } },
};

// ---- changes feed (DESIGN.md 18-22) --------------------------------------------------------------------

export const changeItemSchema = {
  type: 'object',
  required: ['id', 'databaseId', 'updatedAt', 'deleted', 'white', 'black', 'result'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Game UUID.' },
    databaseId: { type: 'string', format: 'uuid', description: 'Id of the containing database.' },
    updatedAt: timestamp('Time of the last change to the game.'),
    deleted: { type: 'boolean', description: 'true for a deleted game (a tombstone).' },
    white: { $ref: 'Player#' },
    black: { $ref: 'Player#' },
    result: { type: 'string', enum: ['1-0', '0-1', '1/2-1/2', '*'], description: 'Result in PGN notation.' },
  },
} as const;

export const changesQuery = {
  cursor: {
    type: 'string',
    description: 'nextCursor of the previous page, unchanged. Not together with since.',
  },
  since: {
    type: 'string',
    description:
      'First run only: start at the changes made at or after this time, ISO 8601 with a zone ' +
      '(2026-11-21T06:13:00.000Z or +02:00). Without cursor and since the feed starts at the beginning.',
  },
  limit: { ...pageQuery(100, 500).limit, description: 'Changes per page, 1 to 500.' },
} as const;

export const changesSchemas = {
  response: {
    200: {
      type: 'object',
      required: ['data', 'nextCursor', 'hasMore'],
      properties: {
        data: { type: 'array', items: changeItemSchema },
        nextCursor: {
          type: 'string',
          description: 'Opaque position after this page, also on an empty page: pass it as cursor next time.',
        },
        hasMore: { type: 'boolean', description: 'Whether more changes exist right now after nextCursor.' },
      },
    },
  },
};

// A typed client of the chessport API: one method per endpoint, iterators over list pages (Link rel="next")
// and over the changes feed (nextCursor until hasMore is false).
import { ChessportError } from './errors.ts';
import { linkTarget } from './link.ts';
import { NdjsonError, ndjsonLineChunks, ndjsonObjects } from './ndjson.ts';
import {
  type Answer,
  type CallOptions,
  type Download,
  Transport,
  type TransportOptions,
} from './transport.ts';
import type {
  Change,
  ChangesPage,
  Database,
  ExpandedChange,
  GameDetail,
  GameResult,
  GameSummary,
  ListPage,
  User,
} from './types.ts';

/** The constructor's options: where the API is, the token, and how calls wait and retry. */
export type ClientOptions = TransportOptions;

// Optional fields take undefined too (exactOptionalPropertyTypes): `{ cursor: saved }` with a saved cursor
// that may be undefined is how callers write it.
/** Which page of a game list. */
export interface PageQuery {
  /** 1 to 200; the server's default is 50. */
  limit?: number | undefined;
  /** Games to skip; the default 0. The iterators follow the Link header from this page on. */
  offset?: number | undefined;
}

/**
 * Which games of a list or an export: the API's filters, combinable (every one given must hold). Each is sent
 * as the query parameter of its name; the server refuses a malformed value with 400 `invalid_request`.
 */
export interface GameFilters {
  /** Games played on or after this day, `YYYY-MM-DD` (partial PGN dates: docs/api.md). */
  dateFrom?: string | undefined;
  /** Games played on or before this day, `YYYY-MM-DD`. */
  dateTo?: string | undefined;
  /** Games changed at or after this time: a Date, or an RFC 3339 date-time with a zone. */
  updatedSince?: Date | string | undefined;
  /** Games of this player, the name exactly as stored (`Carlsen, Magnus`). */
  player?: string | undefined;
  /** Games of the player with this FIDE id (digits). */
  fideId?: string | undefined;
  /** With `player` or `fideId`: only the games where they had this colour. */
  color?: 'white' | 'black' | undefined;
  result?: GameResult | undefined;
  /** An ECO code (`B90`) or a prefix of one (`B9`, `B`). */
  eco?: string | undefined;
  /** The Event tag, exactly. */
  event?: string | undefined;
}

/** A page of a game list, narrowed by filters. */
export type GameQuery = PageQuery & GameFilters;

/** What exportNdjson() exports: one database's games (its UUID or slug), or all the user's; filtered. */
export interface ExportQuery extends GameFilters {
  database?: string | undefined;
}

/**
 * A whole export being read: `for await (const game of exported)` gives each game's detail as game(id)
 * gives it, one at a time, in constant memory. Iterate it once, to its end or until you break out (which
 * ends the download), or cancel() it.
 */
export interface GameExport extends AsyncIterable<GameDetail> {
  /**
   * The X-Changes-Cursor of the answer: the changes feed cursor that continues exactly after the snapshot the
   * export was read from. Follow the feed from it once the export is applied; null from a server that sends
   * none (one older than the snapshot exports).
   */
  readonly cursor: string | null;
  /**
   * The games' lines as text, unparsed, the whole lines of each chunk of the answer as it arrives (empty
   * lines left out): each line is one game's detail as JSON. For a consumer that parses them elsewhere, such
   * as a worker thread of its own; the lines are not checked here. Iterate either this or the export itself,
   * once. An answer that ends inside a line ends it as it ends the games' iteration.
   */
  lines(): AsyncIterable<string[]>;
  /** Ends the download without reading the rest. */
  cancel(): Promise<void>;
}

/** Ids per request of gamesByIds(): the most the server takes. */
const IDS_PER_REQUEST = 200;

/** Where the feed starts: at a cursor, at a time, or (neither) at the beginning. */
export interface ChangesQuery {
  /** nextCursor of an earlier page, unchanged. */
  cursor?: string | undefined;
  /** First run only: changes at or after this time (a Date, or ISO 8601 with a zone). */
  since?: Date | string | undefined;
  /** 1 to 500; the server's default is 100. */
  limit?: number | undefined;
  /**
   * `'game'`: every item carries `game`, the game's detail as game(id) gives it (null for a deleted game),
   * so that a page of up to 500 changes is one request.
   */
  expand?: 'game' | undefined;
  /**
   * Long-poll: 1 to 60 seconds that the server may hold a request whose page would be empty, until a change
   * of the user commits (then that page comes at once) or the time is up (an empty page, its cursor
   * unchanged). With it, changes() may take that long, and feed() does not end once it is caught up: it
   * waits for the next change, as a watch does. The timeout of each attempt (`retry.timeoutMs`) is
   * lengthened by the wait.
   */
  wait?: number | undefined;
}

/** A ChangesQuery with `expand: 'game'`: its pages' items are ExpandedChange. */
export type ExpandedChangesQuery = ChangesQuery & { expand: 'game' };

const JSON_TYPE = 'application/json';
const PGN_TYPE = 'application/x-chess-pgn';
const NDJSON_TYPE = 'application/x-ndjson';

/**
 * The query string of the given parameters, those undefined left out; a Date as ISO 8601. Every name is
 * sent as given, so that the server's 400 names a parameter it does not know (a misspelt filter).
 */
function query(params: object): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params) as [string, unknown][]) {
    if (value === undefined) continue;
    search.set(name, value instanceof Date ? isoTime(value, name) : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

const segment = (id: string) => encodeURIComponent(id);

/** The chessport API, one method per endpoint; every call is a GET that waits on 429 and retries failures. */
export class ChessportClient {
  readonly #http: Transport;

  /** Checks its arguments at once (a TypeError) and sends nothing until a call. */
  constructor(options: ClientOptions) {
    this.#http = new Transport(options);
  }

  /** The API's base address, with the version prefix: `https://chess.example.org/api/v1`. */
  get apiBase(): string {
    return this.#http.apiBase;
  }

  /** GET /me (scope user.read). */
  async me(options?: CallOptions): Promise<User> {
    return (await this.#json<{ data: User }>(this.#http.url('/me'), options)).data;
  }

  /** GET /databases (scope databases.read): every database of the user, in creation order. */
  async databases(options?: CallOptions): Promise<Database[]> {
    return (await this.#json<{ data: Database[] }>(this.#http.url('/databases'), options)).data;
  }

  /**
   * GET /games (scope games.read): one page of the user's games across all databases, in import order,
   * narrowed by the filters: `games({ player: 'Carlsen, Magnus', dateFrom: '2024-03-01', limit: 200 })`.
   */
  async games(page: GameQuery = {}, options?: CallOptions): Promise<ListPage<GameSummary>> {
    return this.#page(this.#http.url(`/games${query({ ...page })}`), options);
  }

  /** GET /databases/{id}/games: one page of one database's games; `database` is its UUID or slug. */
  async databaseGames(
    database: string,
    page: GameQuery = {},
    options?: CallOptions,
  ): Promise<ListPage<GameSummary>> {
    return this.#page(this.#http.url(`/databases/${segment(database)}/games${query({ ...page })}`), options);
  }

  /** Every page of /games from `page.offset` on, following the Link header's rel="next"; filtered. */
  gamePages(page: GameQuery = {}, options?: CallOptions): AsyncGenerator<GameSummary[]> {
    return this.#pages(this.#http.url(`/games${query({ ...page })}`), options);
  }

  /** Every page of one database's games, following the Link header's rel="next". */
  databaseGamePages(
    database: string,
    page: GameQuery = {},
    options?: CallOptions,
  ): AsyncGenerator<GameSummary[]> {
    return this.#pages(this.#http.url(`/databases/${segment(database)}/games${query({ ...page })}`), options);
  }

  /** Every game of the user, page by page behind the scenes. */
  async *allGames(page: GameQuery = {}, options?: CallOptions): AsyncGenerator<GameSummary> {
    for await (const games of this.gamePages(page, options)) yield* games;
  }

  /** Every game of one database, page by page behind the scenes. */
  async *allDatabaseGames(
    database: string,
    page: GameQuery = {},
    options?: CallOptions,
  ): AsyncGenerator<GameSummary> {
    for await (const games of this.databaseGamePages(database, page, options)) yield* games;
  }

  /** GET /games/{id}: the full game, its PGN included. */
  async game(id: string, options?: CallOptions): Promise<GameDetail> {
    return (await this.#json<{ data: GameDetail }>(this.#http.url(`/games/${segment(id)}`), options)).data;
  }

  /**
   * GET /games?ids=: the details of these games, in the order given, 200 to a request. Games that are not
   * the user's, or do not exist (deleted), are left out, alike; a repeated id is given once, where it first
   * appears (as the server does within one request). No request for no ids.
   */
  async gamesByIds(ids: readonly string[], options?: CallOptions): Promise<GameDetail[]> {
    if (!Array.isArray(ids)) throw new TypeError('gamesByIds takes an array of game ids');
    for (const id of ids)
      if (typeof id !== 'string' || id === '' || id.includes(','))
        throw new TypeError(`gamesByIds: ${JSON.stringify(id)} is no game id`);
    const unique = [...new Set(ids)];
    const games: GameDetail[] = [];
    for (let at = 0; at < unique.length; at += IDS_PER_REQUEST) {
      const chunk = unique.slice(at, at + IDS_PER_REQUEST).join(',');
      const { data } = await this.#json<{ data: GameDetail[] }>(
        this.#http.url(`/games${query({ ids: chunk })}`),
        options,
      );
      if (!Array.isArray(data))
        throw new ChessportError({
          status: 200,
          error: 'unexpected_response',
          error_description: 'games by id without a data array',
        });
      games.push(...data);
    }
    return games;
  }

  /**
   * The NDJSON export (`format=ndjson`): every game of one database (`database`: its UUID or slug), or of
   * the user, narrowed by the filters, each with its detail, streamed from one snapshot of the server's store.
   * Resolves once the answer's headers are in, with `cursor`, the feed cursor after that snapshot; then
   * iterate it. A failure mid-download (the token revoked, the connection lost, an answer that ends inside a
   * line) ends the iteration with a ChessportNetworkError (`truncated`); it is not retried, since part of the
   * games have been handed out: start the export again.
   */
  async exportNdjson(exported: ExportQuery = {}, options?: CallOptions): Promise<GameExport> {
    const { database, ...filters } = exported;
    const path = database === undefined ? '/games' : `/databases/${segment(database)}/games`;
    const url = this.#http.url(`${path}${query({ ...filters, format: 'ndjson' })}`);
    const download = await this.#http.download(url, NDJSON_TYPE, options);
    const type = download.response.headers.get('content-type') ?? '';
    if (!/^application\/x-ndjson\b/i.test(type)) {
      await download.body.cancel().catch(() => undefined);
      throw unexpected(download.response, `not NDJSON (${type || 'no content type'})`);
    }
    return gameExport(download);
  }

  /** GET /games/{id}?format=pgn: the game's PGN text. */
  async gamePgn(id: string, options?: CallOptions): Promise<string> {
    return (await this.#http.text(this.#pgnUrl(`/games/${segment(id)}`), PGN_TYPE, options)).text;
  }

  /** GET /databases/{id}/games?format=pgn: every game of the database as one PGN text. */
  async databasePgn(database: string, options?: CallOptions): Promise<string> {
    const url = this.#pgnUrl(`/databases/${segment(database)}/games`);
    return (await this.#http.text(url, PGN_TYPE, options)).text;
  }

  /**
   * The same export as a stream of text chunks, for databases too large to hold in memory. The stream is
   * async iterable: `for await (const chunk of stream)`. A failure mid-download errors the stream with a
   * ChessportNetworkError (`truncated`); it is not retried, since part of the text has been handed out.
   */
  async databasePgnStream(database: string, options?: CallOptions): Promise<ReadableStream<string>> {
    const url = this.#pgnUrl(`/databases/${segment(database)}/games`);
    return (await this.#http.stream(url, PGN_TYPE, options)).pipeThrough(new TextDecoderStream());
  }

  /**
   * GET /changes: one page of the feed; with `expand: 'game'`, each item with its game's detail; with
   * `wait`, a long-poll that the server holds while the page would be empty.
   */
  changes(feed: ExpandedChangesQuery, options?: CallOptions): Promise<ChangesPage<ExpandedChange>>;
  changes(feed?: ChangesQuery, options?: CallOptions): Promise<ChangesPage>;
  async changes(feed: ChangesQuery = {}, options?: CallOptions): Promise<ChangesPage<Change>> {
    const since = feed.since instanceof Date ? isoTime(feed.since) : feed.since;
    const { cursor, limit, expand, wait } = feed;
    const url = this.#http.url(`/changes${query({ cursor, since, limit, expand, wait })}`);
    // A held request answers only when its wait ends: its attempt may take that much longer.
    const held = typeof wait === 'number' && wait > 0 ? wait * 1000 : 0;
    return this.#json<ChangesPage>(url, options, held);
  }

  /**
   * The feed page by page, from `cursor` (or `since`, or the beginning) until a page says hasMore: false;
   * with `expand: 'game'`, each item with its game's detail. Store each page's nextCursor only once that
   * page's changes are applied: then a crash repeats at most one page, and applying a page twice is harmless
   * because each item is a game's latest state.
   *
   * With `wait` it does not end there: every request is a long-poll, so once caught up it yields each page
   * as soon as a change commits, and an empty page (the same cursor) whenever a wait ends without one. It
   * ends only with an error, or when `options.signal` aborts (throwing the signal's reason): a watch.
   */
  feed(feed: ExpandedChangesQuery, options?: CallOptions): AsyncGenerator<ChangesPage<ExpandedChange>>;
  feed(feed?: ChangesQuery, options?: CallOptions): AsyncGenerator<ChangesPage>;
  async *feed(feed: ChangesQuery = {}, options?: CallOptions): AsyncGenerator<ChangesPage> {
    let page = await this.changes(feed, options);
    yield page;
    while (page.hasMore || feed.wait !== undefined) {
      const cursor = page.nextCursor;
      page = await this.changes({ cursor, limit: feed.limit, expand: feed.expand, wait: feed.wait }, options);
      // The server's pages always move on; one that does not (a faulty proxy or cache) would loop forever.
      if (page.hasMore && page.data.length === 0 && page.nextCursor === cursor)
        throw new ChessportError({
          status: 200,
          error: 'unexpected_response',
          error_description: 'the feed answered an empty page that says hasMore with the same cursor',
        });
      yield page;
    }
  }

  async #json<T>(url: string, options: CallOptions | undefined, heldMs = 0): Promise<T> {
    const answer = await this.#http.text(url, JSON_TYPE, options, heldMs);
    const body = jsonBody(answer);
    // Every success of the API is {data, ...}.
    if (!('data' in body)) throw unexpected(answer.response, 'a JSON object without data');
    return body as T;
  }

  async #page<T>(url: string, options: CallOptions | undefined): Promise<ListPage<T>> {
    const answer = await this.#http.text(url, JSON_TYPE, options);
    const { response } = answer;
    const { data } = jsonBody(answer) as { data: T[] };
    if (!Array.isArray(data)) throw unexpected(response, 'a list page without a data array');
    const next = linkTarget(response.headers.get('link'), 'next', url);
    if (next === null) return { data, next: null };
    if (next.url === null) throw unexpected(response, `a Link rel="next" to ${next.target}, which is no URL`);
    const target = this.#http.underApi(next.url);
    // A server (or proxy) that names a page elsewhere answered wrongly: the token is not sent there.
    if (target === null)
      throw unexpected(
        response,
        `a Link rel="next" to ${next.url}: refusing to send the token outside ${this.apiBase}`,
      );
    return { data, next: target };
  }

  async *#pages<T>(first: string, options: CallOptions | undefined): AsyncGenerator<T[]> {
    let url: string | null = first;
    while (url) {
      const page: ListPage<T> = await this.#page<T>(url, options);
      yield page.data;
      url = page.next;
    }
  }

  #pgnUrl(path: string): string {
    return this.#http.url(`${path}?format=pgn`);
  }
}

/** A bad argument is a TypeError at once; toISOString() threw a RangeError for an invalid Date. */
function isoTime(date: Date, name = 'since'): string {
  if (Number.isNaN(date.getTime())) throw new TypeError(`${name} is an invalid Date`);
  return date.toISOString();
}

/** The games of an export, read line by line from its body as the caller iterates. */
function gameExport({ response, body, broken }: Download): GameExport {
  const text = body.pipeThrough(new TextDecoderStream());
  let started = false;
  /** What the iteration gives, the answer's NDJSON errors as the client's. */
  async function* read<T>(items: (text: AsyncIterable<string>) => AsyncGenerator<T>): AsyncGenerator<T> {
    if (started) throw new TypeError('an export is iterated once');
    started = true;
    try {
      yield* items(chunks(text));
    } catch (error) {
      if (!(error instanceof NdjsonError)) throw error;
      if (error.truncated) throw broken(error);
      throw unexpected(response, error.message);
    }
  }
  return {
    cursor: response.headers.get('x-changes-cursor'),
    cancel: () => text.cancel(),
    lines: () => read(nonEmptyLines),
    [Symbol.asyncIterator]: () => read(ndjsonObjects) as AsyncGenerator<GameDetail>,
  };
}

/** Each chunk's whole lines but the empty ones; a chunk of none gives nothing. */
async function* nonEmptyLines(text: AsyncIterable<string>): AsyncGenerator<string[]> {
  for await (const lines of ndjsonLineChunks(text)) {
    const games = lines.filter((line) => line.trim() !== '');
    if (games.length > 0) yield games;
  }
}

/** A stream's chunks as an async iterable (ReadableStream is not one in every runtime's types). */
async function* chunks<T>(stream: ReadableStream<T>): AsyncGenerator<T> {
  const reader = stream.getReader();
  let done = false;
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // Left early (the caller broke out, or a line was faulty): the download ends.
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

function unexpected(response: Response, what: string): ChessportError {
  return new ChessportError({
    status: response.status,
    error: 'unexpected_response',
    error_description: `HTTP ${response.status}: ${what}`,
    requestId: response.headers.get('x-request-id'),
  });
}

/**
 * A successful answer's JSON object, or ChessportError unexpected_response: a 200 that is no JSON object
 * (a proxy's or captive portal's page) must not reach callers as a SyntaxError or as a wrongly typed value.
 */
function jsonBody({ response, text }: Answer): object {
  const type = response.headers.get('content-type') ?? '';
  let body: unknown;
  try {
    body = /^application\/(?:[\w.+-]+\+)?json\b/i.test(type) ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw unexpected(response, `not a JSON object (${type || 'no content type'}): ${text.slice(0, 100)}`);
  return body;
}

// One place that turns a read endpoint into routes: GET (and HEAD) with auth, rate limit, scope and strict
// parameters, 405 for every other method (docs/design.md 16) and an OPTIONS answer naming what is allowed (a CORS
// preflight is answered earlier, by the CORS plugin). The GET route's schema is also its operation in the
// OpenAPI document (src/api/openapi): id, tag, texts, scope, parameters and every answer; the HEAD route,
// which Fastify adds with the same schema, and the OPTIONS route are operations there too.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Scope } from '../domain/scopes.ts';
import { ApiError } from '../platform/http/errors.ts';
import type { TokenInfo } from '../store/index.ts';
import { authenticate, requireScope } from './auth.ts';
import type { ApiContext } from './context.ts';
import { OAUTH_SCHEME, SECURITY_SCHEME, type Tag } from './openapi/document.ts';
import { optionsResponses, type ReadAnswers, readResponses } from './openapi/responses.ts';
import { checkRawQuery, type QuerySchema } from './params.ts';

// Every method that answers on an API path (OPTIONS too, before authentication), as a 405's Allow names them.
export const ALLOW = 'GET, HEAD, OPTIONS';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Path parameters that are UUIDs, in lower case: RFC 9562 makes UUIDs case-insensitive on input, and the
 * store holds them in lower case (the answer's `id` stays so). Slugs are lower case and compared exactly.
 */
function lowerCaseUuids(params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    if (UUID.test(value)) params[name] = value.toLowerCase();
  }
}

/**
 * Every method Node's HTTP parser takes but GET, HEAD, OPTIONS and CONNECT (which Node hands to a 'connect'
 * listener, never to the router: src/server/plugins/client-errors.ts answers it 405): on an API path each
 * one is 405.
 */
export const REFUSED_METHODS = process
  // Not `import { METHODS } from 'node:http'`: an ES module import of node:http makes Node build all its
  // exports, undici's WebSocket among them, which loads tls, http2 and zlib, a cost to every CLI command that
  // reaches this module though none of them needs HTTP.
  .getBuiltinModule('node:http')
  .METHODS.filter((m) => !['GET', 'HEAD', 'OPTIONS', 'CONNECT'].includes(m));

/**
 * Lets the router take every method. Fastify knows only a few by default, and PROPFIND, LOCK, SEARCH and the
 * rest would never reach a route: they would be 404 on paths that exist. Added without a body: nothing reads one.
 */
export function routeEveryMethod(app: FastifyInstance): void {
  for (const method of REFUSED_METHODS) {
    if (!app.supportedMethods.includes(method)) app.addHttpMethod(method);
  }
}

export interface ReadRoute {
  url: string;
  scope: Scope;
  /** The OpenAPI operation: its unique id, its resource, a one-line summary and the details. */
  operationId: string;
  tag: Tag;
  summary: string;
  description: string;
  query?: QuerySchema['properties'];
  params?: Record<string, { type: 'string'; description: string }>;
  /** The 200 JSON answer. */
  ok: ReadAnswers['ok'];
  /**
   * The list says its total in X-Total-Count; `bounded`: a filtered one may say only that it exceeds
   * FILTER_TOTAL_MAX instead (X-Total-Count-Exceeds).
   */
  total?: boolean | 'bounded';
  /** What its PGN answer holds, where the `format` parameter asks for one. */
  pgn?: string;
  /** What its NDJSON answer holds, where the `format` parameter can ask for one (a whole export). */
  ndjson?: string;
  handler: (request: FastifyRequest, reply: FastifyReply, token: TokenInfo) => Promise<unknown>;
}

export function readRoute(app: FastifyInstance, context: ApiContext, route: ReadRoute): void {
  const querystring: QuerySchema = {
    type: 'object',
    additionalProperties: false,
    properties: route.query ?? {},
  };
  const schema: FastifySchema = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    description: route.description,
    security: [{ [SECURITY_SCHEME]: [route.scope] }, { [OAUTH_SCHEME]: [route.scope] }],
    querystring,
    response: readResponses({
      ok: route.ok,
      paged: route.query?.offset !== undefined,
      total: route.total ?? false,
      pgn: route.query?.format === undefined ? undefined : route.pgn,
      ndjson: route.query?.format === undefined ? undefined : route.ndjson,
      notFound: route.params !== undefined,
    }),
    ...(route.params && {
      params: { type: 'object', required: Object.keys(route.params), properties: route.params },
    }),
  };
  // Answers depend on the token, and on Accept where PGN can be negotiated; never for shared caches, and
  // revalidated (If-None-Match) before a stored copy is reused. Lower case, as @fastify/compress adds
  // accept-encoding only when it does not find it.
  const vary = route.query?.format
    ? 'authorization, accept, accept-encoding'
    : 'authorization, accept-encoding';
  app.route({
    method: 'GET',
    url: route.url,
    schema,
    config: { scope: route.scope },
    // Authentication comes first: without a valid token nothing about the request is revealed. The rate
    // limit comes right after it, keyed by app and user, or by client address when the token is not valid:
    // so failed attempts count too, and every answer after this point carries the rate-limit headers.
    // Only an address that has used up its budget is refused before that, whatever its token: a right guess
    // then looks like a wrong one, and costs no lookup.
    onRequest: async (request, reply) => {
      reply.headers({ 'cache-control': 'private, no-cache', vary });
      context.limiter.refuseSpentAddress(request, reply);
      let refused: ApiError | undefined;
      try {
        request.token = await authenticate(context.store, request, context.resourceMetadataUrl());
        // When the token was last used (/account shows it), at most once a minute per token; the answer does
        // not wait for it, and a store too busy to take it now takes the next one.
        context.store.tokens.touch(request.token).catch((error: unknown) => {
          request.log.debug({ err: error }, 'could not note the token used');
        });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        refused = error;
      }
      await context.limiter.apply(request, reply);
      if (refused) throw refused;
      requireScope(request.token as TokenInfo, route.scope);
    },
    preValidation: async (request) => {
      lowerCaseUuids(request.params as Record<string, string>);
      checkRawQuery(request, querystring);
    },
    handler: async (request, reply) => route.handler(request, reply, request.token as TokenInfo),
  });
  methodGuards(app, route.url, {
    operationId: `${route.operationId}Options`,
    tags: [route.tag],
    summary: 'The methods this path answers (OPTIONS), without a token.',
    description:
      'Allow names GET, HEAD and OPTIONS; answered before authentication and before any request body is ' +
      'read. A CORS preflight (Origin and Access-Control-Request-Method) is answered before this operation, ' +
      'as the document’s x-other-methods.preflight describes.',
    // No token: the answer is the same for everyone.
    security: [],
    ...(route.params && {
      params: { type: 'object', required: Object.keys(route.params), properties: route.params },
    }),
    response: optionsResponses(ALLOW),
  });
}

/**
 * 405 for every other method and an OPTIONS answer on a read-only path. The OPTIONS route is an operation of
 * the document when given its schema; without one it is untagged, and left out.
 */
export function methodGuards(app: FastifyInstance, url: string, options?: FastifySchema): void {
  const refuse = async () => {
    throw new ApiError('method_not_allowed', `The API is read-only: use ${ALLOW}.`, { allow: ALLOW });
  };
  app.route({
    method: REFUSED_METHODS,
    url,
    // Refused in onRequest, before Fastify reads a body: a POST of broken JSON, of an unknown media type or a
    // QUERY without Content-Type are 405 like any other, not 400. Before authentication too: like an unknown
    // path's 404, the answer depends on the path and the method only, never on the user.
    onRequest: refuse,
    handler: refuse,
  });
  const allow = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.code(204).header('allow', ALLOW).send();
  // Answered in onRequest too, before Fastify reads a body: OPTIONS with broken JSON or an unknown media type
  // is 204 like any other, and one whose body never comes in is answered at once.
  app.route({
    method: 'OPTIONS',
    url,
    onRequest: allow,
    handler: allow,
    ...(options && { schema: options }),
  });
}

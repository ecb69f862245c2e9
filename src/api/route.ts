// One place that turns a read endpoint into routes: GET (and HEAD) with auth, scope and strict parameters,
// 405 for the write methods (DESIGN.md 16) and an OPTIONS answer naming what is allowed.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { TokenInfo } from '../store/index.ts';
import type { ApiContext } from './app.ts';
import { authenticate, requireScope, type Scope } from './auth.ts';
import { ApiError } from './errors.ts';
import { checkRawQuery, type QuerySchema } from './params.ts';
import { errorResponses } from './schemas.ts';

export const ALLOW = 'GET, HEAD';

export interface ReadRoute {
  url: string;
  scope: Scope;
  summary: string;
  query?: QuerySchema['properties'];
  params?: Record<string, { type: 'string'; description: string }>;
  response: FastifySchema['response'];
  handler: (request: FastifyRequest, reply: FastifyReply, token: TokenInfo) => Promise<unknown>;
}

export function readRoute(app: FastifyInstance, context: ApiContext, route: ReadRoute): void {
  const querystring: QuerySchema = {
    type: 'object',
    additionalProperties: false,
    properties: route.query ?? {},
  };
  // summary is not in Fastify's type but is kept on the schema for the OpenAPI document.
  const schema: FastifySchema & { summary: string } = {
    summary: route.summary,
    querystring,
    response: { ...(route.response as object), ...errorResponses },
    ...(route.params && {
      params: { type: 'object', required: Object.keys(route.params), properties: route.params },
    }),
  };
  app.route({
    method: 'GET',
    url: route.url,
    schema,
    config: { scope: route.scope },
    // Authentication comes first: without a valid token nothing about the request is revealed.
    onRequest: async (request) => {
      request.token = await authenticate(context.store, request);
      requireScope(request.token, route.scope);
    },
    preValidation: async (request) => checkRawQuery(request, querystring),
    handler: async (request, reply) => route.handler(request, reply, request.token as TokenInfo),
  });
  app.route({
    method: ['POST', 'PUT', 'PATCH', 'DELETE'],
    url: route.url,
    handler: async () => {
      throw new ApiError('method_not_allowed', `The API is read-only: use ${ALLOW}.`, { allow: ALLOW });
    },
  });
  app.route({
    method: 'OPTIONS',
    url: route.url,
    handler: async (_request, reply) => reply.code(204).header('allow', `${ALLOW}, OPTIONS`).send(),
  });
}

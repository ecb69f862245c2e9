// The Fastify application: shared schemas, the error shape everywhere, and the /api/v1 routes.
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Store, TokenInfo } from '../store/index.ts';
import { ApiError } from './errors.ts';
import { describeParam } from './params.ts';
import { changeRoutes } from './routes/changes.ts';
import { databaseRoutes } from './routes/databases.ts';
import { gameRoutes } from './routes/games.ts';
import { meRoutes } from './routes/me.ts';
import { sharedSchemas } from './schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    token: TokenInfo | null;
  }
}

export interface ApiOptions {
  store: Store;
  /** Server secret: keys the pairwise user ids and signs feed cursors. */
  secret: string;
  logLevel?: string;
}

export interface ApiContext {
  store: Store;
  secret: string;
}

export function buildApp(options: ApiOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logLevel === 'silent' ? false : { level: options.logLevel ?? 'info' },
    // Unknown parameters must fail validation, not vanish (DESIGN.md 13).
    // Long ids must reach the handler and get the same 404 as any other unknown id (DESIGN.md 14).
    maxParamLength: 2048,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true, allErrors: false } },
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, new ApiError('invalid_request', `The request is malformed: ${error.message}`));
    },
  });
  app.decorateRequest('token', null);
  for (const schema of sharedSchemas) app.addSchema(schema);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    sendError(reply, toApiError(error, request));
  });
  app.setNotFoundHandler((_request, reply) => {
    sendError(reply, new ApiError('not_found', 'There is no such resource.'));
  });

  const context: ApiContext = { store: options.store, secret: options.secret };
  app.register(
    async (api) => {
      meRoutes(api, context);
      databaseRoutes(api, context);
      gameRoutes(api, context);
      changeRoutes(api, context);
    },
    { prefix: '/api/v1' },
  );
  return app;
}

function sendError(reply: FastifyReply, error: ApiError): void {
  reply.code(error.status).headers(error.headers).type('application/json; charset=utf-8').send(error.body());
}

function toApiError(error: FastifyError, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const [first] = error.validation;
    const name = first?.instancePath.replace(/^\//, '') || String(first?.params?.additionalProperty ?? '');
    const schema = request.routeOptions.schema?.querystring as
      | { properties?: Record<string, Parameters<typeof describeParam>[1]> }
      | undefined;
    return new ApiError('invalid_request', describeParam(name, schema?.properties?.[name]));
  }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError(error.statusCode === 404 ? 'not_found' : 'invalid_request', error.message);
  }
  request.log.error({ err: error }, 'request failed');
  return new ApiError('server_error', 'The server failed to answer the request.');
}

// What every API path answers beside its operations (GET, HEAD, OPTIONS), as the document's `x-other-methods`
// extension: the CORS preflight, which the CORS handling answers before any operation, and the 405 of every
// other method. OpenAPI 3.1 has no place for them: responses belong to operations, and an operation per
// refused method (POST, PUT, ...) would be one that never succeeds (Redocly's recommended rules warn about
// those), would give generated clients a method per path that always fails, and could not name QUERY or
// PROPFIND at all. The answers are written here once, in the document's own shapes (Response and Header
// Objects), and the test suite's validator checks the server's preflight and 405 answers against them.
import { ALLOWED_HEADERS } from '../../platform/http/cors.ts';
import { ALLOW, REFUSED_METHODS } from '../route.ts';

export const OTHER_METHODS = 'x-other-methods';

const requestId = { $ref: '#/components/headers/X-Request-Id' };

const varyOrigin = {
  description: 'Origin: added by the CORS handling; every origin gets the same answer.',
  schema: { type: 'string' },
};

export function otherMethods() {
  return {
    description:
      'The answers of every path in paths that no operation gives: a CORS preflight, and every method but ' +
      'GET, HEAD and OPTIONS. They are the same on every path, with or without a token, and none is ' +
      'counted by the rate limit. Every path also answers ' +
      'CORS: Access-Control-Allow-Origin: * and Access-Control-Expose-Headers (every header documented here ' +
      'that a browser app may read) on every answer.',
    preflight: {
      description:
        'OPTIONS with Origin and Access-Control-Request-Method: a CORS preflight, answered for any origin ' +
        'before authentication. No credentials: the token travels in the Authorization header.',
      responses: {
        204: {
          description: 'No Content: the preflight passes for GET and HEAD with the request headers listed.',
          headers: {
            'Access-Control-Allow-Origin': {
              description: 'Any origin.',
              required: true,
              schema: { type: 'string', const: '*' },
            },
            'Access-Control-Allow-Methods': {
              description: 'The methods a browser app may use.',
              required: true,
              schema: { type: 'string', const: 'GET, HEAD' },
            },
            'Access-Control-Allow-Headers': {
              description: 'The request headers a browser app may send.',
              required: true,
              schema: { type: 'string', const: ALLOWED_HEADERS.join(', ') },
            },
            'Access-Control-Max-Age': {
              description: 'Seconds a browser may keep this preflight answer.',
              required: true,
              schema: { type: 'integer', minimum: 0 },
            },
            'X-Request-Id': requestId,
            Vary: varyOrigin,
          },
        },
      },
    },
    other: {
      description:
        'Every other method: the API is read-only. Refused before authentication and before any request ' +
        'body is read, so a POST of broken JSON is 405 too.',
      methods: REFUSED_METHODS,
      responses: {
        405: {
          description: 'method_not_allowed: the path answers GET, HEAD and OPTIONS only.',
          headers: {
            Allow: {
              description: 'The methods the path answers.',
              required: true,
              schema: { type: 'string', const: ALLOW },
            },
            'X-Request-Id': requestId,
            Vary: varyOrigin,
          },
          content: {
            'application/json': {
              schema: { $ref: '#/components/schemas/ErrorBody' },
              example: {
                error: 'method_not_allowed',
                error_description: `The API is read-only: use ${ALLOW}.`,
              },
            },
          },
        },
      },
    },
  };
}

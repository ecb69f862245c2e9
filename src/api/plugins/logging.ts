// Structured pino logs that never carry a credential: Authorization headers are redacted wherever they
// appear, and anything token-shaped in a URL (a client that put its token in the query) is masked.

const TOKEN_IN_URL = /cp_[A-Za-z0-9_~.+/=-]+|((?:access_)?token=)[^&#]*/gi;

export function maskTokens(text: string): string {
  return text.replace(TOKEN_IN_URL, (_match, param?: string) =>
    param ? `${param}[redacted]` : 'cp_[redacted]',
  );
}

/** What a request log line says about the request; Fastify passes its request object here. */
interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
}

export function loggerOptions(level: string) {
  return {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        'request.headers.authorization',
      ],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: LoggedRequest) => ({
        method: request.method,
        url: maskTokens(request.url ?? ''),
        remoteAddress: request.ip,
      }),
    },
  };
}

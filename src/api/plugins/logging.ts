// Structured pino logs that never carry a credential: Authorization headers are redacted wherever they
// appear, and anything token-shaped in a URL (a client that put its token in the query) is masked, also
// when it is percent-encoded, as the server decodes it. The URL is logged as sent, never decoded.
import { writeSync } from 'node:fs';

/**
 * A literal as it may stand in a URL: each character as itself or percent-encoded (`cp%5F`, `%63p_`), in
 * either case of letter and hex digit (the pattern is case-insensitive).
 */
function encodable(literal: string): string {
  return [...literal]
    .map((c) => {
      const codes = new Set([c.toLowerCase(), c.toUpperCase()].map((v) => v.charCodeAt(0).toString(16)));
      return `(?:${c}|${[...codes].map((code) => `%${code}`).join('|')})`;
    })
    .join('');
}

// A token's characters, or any percent-escape: an encoded token is masked whole (masking a little more is
// harmless).
const TOKEN_BODY = '(?:[A-Za-z0-9_~.+/=-]|%[0-9A-Fa-f]{2})+';
const TOKEN_IN_URL = new RegExp(
  `${encodable('cp_')}${TOKEN_BODY}|((?:${encodable('access_')})?${encodable('token')}=)[^&#]*`,
  'gi',
);

export function maskTokens(text: string): string {
  return text.replace(TOKEN_IN_URL, (_match, param?: string) =>
    param ? `${param}[redacted]` : 'cp_[redacted]',
  );
}

/** What a request log line says about the request; Fastify passes its request object here. */
interface LoggedRequest {
  method?: string;
  url?: string;
  /** The target as sent, when rewriteUrl changed it (request-target.ts). */
  originalUrl?: string;
  ip?: string;
}

/**
 * Where the log lines go: stdout, one synchronous write per line, like pino's default destination. But a
 * broken pipe (whoever read stdout has gone) drops the line: the default (sonic-boom) retries such a write
 * forever from its exit hook, so a server whose log reader had gone could never stop on SIGTERM.
 */
export const stdoutLines = {
  write(line: string): void {
    for (let attempt = 0; ; attempt++) {
      try {
        writeSync(1, line);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') return;
        // A non-blocking stdout that is full: wait 1 ms and retry, for at most a second.
        if (code !== 'EAGAIN' || attempt >= 1000) throw error;
        Atomics.wait(PAUSE, 0, 0, 1);
      }
    }
  },
};
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

export function loggerOptions(level: string) {
  return {
    level,
    stream: stdoutLines,
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
        url: maskTokens(request.originalUrl ?? request.url ?? ''),
        remoteAddress: request.ip,
      }),
    },
  };
}

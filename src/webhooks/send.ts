// One attempt of a delivery (docs/webhooks.md#retries-and-disabling): a POST that gets 10 s in all, follows no redirect,
// connects only to an address it checked (address.ts) and reads at most a few KB of the answer.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkEndpointUrl, guardedLookup, RefusedAddress } from '../platform/webhook-address.ts';

/** The longest an attempt takes, from connecting to the end of the answer. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** How much of a receiver's answer is read; the rest is dropped with the connection. */
export const ANSWER_CAP_BYTES = 4096;

/** How much of a failed answer's body is kept with the delivery, for the operator. */
const ERROR_TEXT_CHARS = 200;

export type AttemptOutcome = 'delivered' | 'http_error' | 'timeout' | 'network_error' | 'address_refused';

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** The answer's status, when there was one. */
  status: number | null;
  /** What went wrong, for the operator (empty when delivered). */
  error: string;
}

export interface Sender {
  /** POSTs the body; resolves (never rejects) with what came of it. */
  send(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult>;
  /** Closes the connections kept alive. */
  close(): void;
}

export function createSender(options: {
  allowPrivate: boolean;
  timeoutMs?: number;
  lookup?: LookupFunction;
}): Sender {
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
  const lookup = options.allowPrivate ? undefined : (options.lookup ?? guardedLookup());
  // Connections are kept for the next delivery to the same receiver; each new one is looked up and checked.
  const agents = {
    'http:': new http.Agent({ keepAlive: true, timeout: 5000 }),
    'https:': new https.Agent({ keepAlive: true, timeout: 5000 }),
  };
  return {
    send: async (target, headers, body) => {
      let url: URL;
      try {
        url = checkEndpointUrl(target, options.allowPrivate);
      } catch (error) {
        return { outcome: 'address_refused', status: null, error: (error as Error).message };
      }
      const protocol = url.protocol as 'http:' | 'https:';
      return post(protocol === 'https:' ? https.request : http.request, url, {
        agent: agents[protocol],
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        },
        body,
        timeoutMs,
        lookup,
      });
    },
    close: () => {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}

function post(
  request: typeof http.request,
  url: URL,
  options: {
    agent: http.Agent;
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    lookup: LookupFunction | undefined;
  },
): Promise<AttemptResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: AttemptResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const req = request(url, {
      method: 'POST',
      agent: options.agent,
      headers: options.headers,
      ...(options.lookup && { lookup: options.lookup }),
    });
    const timer = setTimeout(() => {
      finish({ outcome: 'timeout', status: null, error: `no answer within ${options.timeoutMs / 1000} s` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (error instanceof RefusedAddress || error.code === 'ERR_WEBHOOK_ADDRESS') {
        finish({ outcome: 'address_refused', status: null, error: error.message });
      } else {
        finish({
          outcome: 'network_error',
          status: null,
          error: error.code ? `${error.code}: ${error.message}` : error.message,
        });
      }
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      const chunks: Buffer[] = [];
      let length = 0;
      const done = () => {
        const ok = status >= 200 && status < 300;
        const text = Buffer.concat(chunks).toString('utf8').slice(0, ERROR_TEXT_CHARS).trim();
        finish(
          ok
            ? { outcome: 'delivered', status, error: '' }
            : { outcome: 'http_error', status, error: `HTTP ${status}${text ? `: ${text}` : ''}` },
        );
      };
      res.on('data', (chunk: Buffer) => {
        if (length >= ANSWER_CAP_BYTES) return;
        chunks.push(chunk.subarray(0, ANSWER_CAP_BYTES - length));
        length += chunk.length;
        if (length >= ANSWER_CAP_BYTES) {
          // Enough read: the rest is not waited for, and the connection goes with it.
          done();
          res.destroy();
        }
      });
      res.on('end', done);
      res.on('error', done);
      res.on('aborted', done);
    });
    req.end(options.body);
  });
}

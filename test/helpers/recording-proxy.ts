// An HTTP proxy in front of a server that records every request it passes (method and path with query), for
// tests that count what a client sent; `intercept` may answer a request itself instead, as an older server,
// a gateway or a faulty proxy would.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordingProxy {
  base: string;
  /** `GET /api/v1/...` for each request, in the order they came. */
  requests: string[];
  /** The header fields of each request, in the same order. */
  headers: IncomingHttpHeaders[];
  close(): Promise<void>;
}

/**
 * An answer of the proxy's own (with more header fields, if given; its body whole, or in parts as they come);
 * undefined passes the request on.
 */
export type Intercept = (req: IncomingMessage) => Promise<OwnAnswer | undefined> | undefined;

export interface OwnAnswer {
  status: number;
  type: string;
  body: string | AsyncIterable<string>;
  headers?: Record<string, string>;
}

export async function recordingProxy(upstream: string, intercept?: Intercept): Promise<RecordingProxy> {
  const target = new URL(upstream);
  const requests: string[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const proxy = createServer(async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    headers.push(req.headers);
    const own = await intercept?.(req);
    if (own) {
      res.writeHead(own.status, { ...own.headers, 'content-type': own.type });
      if (typeof own.body === 'string') {
        res.end(own.body);
        return;
      }
      for await (const part of own.body) if (!res.destroyed) res.write(part);
      res.end();
      return;
    }
    const forward = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    requests,
    headers,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}

/** The upstream's JSON answer to the same request, for an intercept that rewrites it. */
export async function upstreamJson<T>(upstream: string, req: IncomingMessage): Promise<T> {
  const answer = await fetch(`${upstream}${req.url}`, {
    headers: { authorization: req.headers.authorization ?? '' },
  });
  return (await answer.json()) as T;
}

/**
 * The upstream's answer to the same export request (NDJSON, with its X-Changes-Cursor), passed on with its text
 * made by `body`: spoilt, or held part-way (heldAfter).
 */
export async function upstreamExport(
  upstream: string,
  req: IncomingMessage,
  body: (text: string) => string | AsyncIterable<string>,
): Promise<OwnAnswer> {
  const answer = await fetch(`${upstream}${req.url}`, {
    headers: { authorization: req.headers.authorization ?? '' },
  });
  return {
    status: answer.status,
    type: answer.headers.get('content-type') ?? '',
    headers: { 'x-changes-cursor': answer.headers.get('x-changes-cursor') ?? '' },
    body: body(await answer.text()),
  };
}

/**
 * The text's first `lines` lines at once, and the rest once `released` resolves: an export that a test holds
 * mid-way, so that what it does to the reader (a kill, a signal) comes mid-export however fast the reader is.
 */
export async function* heldAfter(
  text: string,
  lines: number,
  released: Promise<void>,
): AsyncGenerator<string> {
  const cut = text.split('\n', lines).join('\n').length + 1;
  yield text.slice(0, cut);
  await released;
  yield text.slice(cut);
}

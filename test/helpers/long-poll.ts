// Helpers of the long-poll suites: a request of the changes feed left waiting (over its own connection, so
// that a test can cut it), what a server's /metrics says of the waits, and what a server logs from a moment on.
import { type ClientRequest, request } from 'node:http';
import { checkAgainstOpenApi } from './openapi-validate.ts';

export interface FeedPage {
  data: { id: string; updatedAt: string; deleted: boolean }[];
  nextCursor: string;
  hasMore: boolean;
}

export interface Waiting {
  /** The answer, and when it arrived (Date.now()). */
  answer: Promise<{ status: number; headers: Record<string, unknown>; json: FeedPage; at: number }>;
  /** The request, to cut its connection. */
  request: ClientRequest;
  /** When it was sent (Date.now()). */
  sentAt: number;
}

/**
 * GET /api/v1/changes?<query> on a connection of its own (no keep-alive), without awaiting the answer. The
 * answer is checked against the server's OpenAPI document (openapi-validate.ts), as every other one is: a test
 * that stops the server while requests wait reads the document first.
 */
export function waitForChanges(base: string, token: string, query: string): Waiting {
  const url = new URL(`${base}/api/v1/changes?${query}`);
  const sentAt = Date.now();
  let req: ClientRequest | undefined;
  const answer = new Promise<{
    status: number;
    headers: Record<string, unknown>;
    json: FeedPage;
    at: number;
  }>((resolve, reject) => {
    req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: { authorization: `Bearer ${token}` },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const at = Date.now();
          const text = Buffer.concat(chunks).toString();
          const status = res.statusCode ?? 0;
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
          }
          checkAgainstOpenApi({ url: url.href, method: 'GET', status, headers, text }).then(
            () => resolve({ status, headers: res.headers, json: JSON.parse(text), at }),
            reject,
          );
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
  return { answer, request: req as ClientRequest, sentAt };
}

/**
 * A counter or gauge of the server's /metrics (the sum of its series whose labels include `labels`).
 *
 * The feed's, heavy requests' and aborted requests' metrics (src/platform/metrics.ts) are the process's: the
 * servers of one test's process (serveInProcess) share them, and each one's /metrics shows their sum. The
 * HTTP requests' and the store's are each server's own.
 */
export async function metric(base: string, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (m?.[1] === name && (m[2] ?? '').includes(labels)) sum += Number(m[3]);
  }
  return sum;
}

/**
 * Resolves once the server's /metrics shows at least n requests waiting (checked every 50 ms, up to 60 s). The
 * count is the process's (chessport_feed_waiting, above): with several servers in the test's process, n
 * counts the waits of all of them.
 */
export async function waitingAtLeast(base: string, n: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const waiting = await metric(base, 'chessport_feed_waiting');
    if (waiting >= n) return;
    if (Date.now() > until) throw new Error(`only ${waiting} of ${n} requests are waiting after 60 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves once the server's /metrics shows at most n requests waiting (of the process's, as above). */
export async function waitingAtMost(base: string, n: number): Promise<void> {
  const until = Date.now() + 60_000;
  for (;;) {
    const waiting = await metric(base, 'chessport_feed_waiting');
    if (waiting <= n) return;
    if (Date.now() > until) throw new Error(`${waiting} requests still wait after 60 s (expected ${n})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a server in the test's process (serveInProcess) logs from now on: its log lines after this call. */
export function logFrom(server: { log(): string }): { text(): string } {
  const from = server.log().length;
  return { text: () => server.log().slice(from) };
}

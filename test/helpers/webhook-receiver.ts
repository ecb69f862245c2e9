// A webhook receiver for the tests: a real HTTP server that checks every delivery's signature with svix and
// with standardwebhooks (the libraries receivers use, not the project's code) against each secret it is given, records what came, and
// answers what the test says; and the endpoints the tests register through the CLI, one a receiver.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook } from 'svix';
import { cliJson, type Env } from './harness.ts';

export interface Received {
  id: string;
  /** The parsed body: type, timestamp, data (user, and revokedAt for grant.revoked). */
  event: { type: string; timestamp: string; data: { user: string; revokedAt?: string } };
  /** The secrets (of those given) whose svix and standardwebhooks checks both passed. */
  verifiedWith: string[];
  headers: IncomingHttpHeaders;
  /** When it arrived (Date.now()). */
  at: number;
  /** What the receiver answered. */
  status: number;
}

export interface Receiver {
  url: string;
  /** Every request so far, in order of arrival (failed answers too). */
  received: Received[];
  /** The requests it answered 2xx whose signature verified with `secret` (the first given, by default). */
  delivered(secret?: string): Received[];
  /** What it answers from now on (default 204); a function decides per request, in order of arrival. */
  answer(status: number | ((request: number) => number)): void;
  /** Hold every request from now on without answering (a receiver that hangs), or stop holding. */
  hold(on: boolean): void;
  /** The secrets it verifies with, the first the one `delivered()` checks by default. */
  setSecrets(secrets: string[]): void;
  /** Resolves once `predicate` holds of the received requests; rejects after timeoutMs. */
  waitFor(predicate: (received: Received[]) => boolean, timeoutMs: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(secrets: string[] = []): Promise<Receiver> {
  const received: Received[] = [];
  let verifyWith = secrets;
  let answer: number | ((request: number) => number) = 204;
  let holding = false;
  let requests = 0;
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      const n = requests++;
      const status = typeof answer === 'function' ? answer(n) : answer;
      const verifiedWith = verifyWith.filter((secret) => {
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          new StandardWebhook(secret).verify(body, req.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      received.push({
        id: String(req.headers['webhook-id']),
        event: JSON.parse(body) as Received['event'],
        verifiedWith,
        headers: req.headers,
        at: Date.now(),
        status: holding ? 0 : status,
      });
      for (const wake of waiters) wake();
      if (!holding) res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    delivered: (secret = verifyWith[0]) =>
      received.filter(
        (r) => r.status >= 200 && r.status < 300 && secret !== undefined && r.verifiedWith.includes(secret),
      ),
    answer: (status) => {
      answer = status;
    },
    hold: (on) => {
      holding = on;
    },
    setSecrets: (next) => {
      verifyWith = next;
    },
    waitFor: (predicate, timeoutMs, what = 'the deliveries awaited') =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          const seen = received.map(
            (r) => `${r.id} ${r.status} ${r.event.data.user} ${r.verifiedWith.length}`,
          );
          reject(new Error(`${what} did not come within ${timeoutMs} ms; received:\n${seen.join('\n')}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An endpoint as `chessport webhooks add --json` prints it. */
export interface AddedEndpoint {
  id: string;
  app: string;
  url: string;
  secret: string;
}

/** Registers `url` as a webhook endpoint of the app named `app`, through `chessport webhooks add`. */
export function addWebhookEndpoint(env: Env, app: string, url: string): Promise<AddedEndpoint> {
  return cliJson<AddedEndpoint>(env, ['webhooks', 'add', '--app', app, '--url', url]);
}

/** Registers the receiver as a webhook endpoint of `app` and gives it the endpoint's secret to check with. */
export async function subscribe(env: Env, app: string, receiver: Receiver): Promise<AddedEndpoint> {
  const endpoint = await addWebhookEndpoint(env, app, receiver.url);
  receiver.setSecrets([endpoint.secret]);
  return endpoint;
}

// Helpers of the production suites: raw HTTP (fetch would decompress and hide Content-Encoding), log capture,
// generated PGN, and a small seeded store of one user with two apps.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, request } from 'node:http';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { Env, Server } from './harness.ts';
import { type InProcessServer, seed as seedStore, withStore } from './in-process.ts';
import { checkAgainstOpenApi } from './openapi-validate.ts';

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * One request over node:http: the body exactly as sent (compressed or not). A header given as an array is
 * sent as that many header lines; `body` is sent as the request's content.
 */
export function raw(
  base: string,
  path: string,
  options: {
    method?: string;
    headers?: Record<string, string | string[]>;
    body?: string;
    agent?: false;
  } = {},
): Promise<RawAnswer> {
  const url = new URL(base + path);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: options.method ?? 'GET',
        headers: options.headers ?? {},
        agent: options.agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const answer = { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) };
          conformsToOpenApi(url, options.method ?? 'GET', answer).then(() => resolve(answer), reject);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Checks the answer against the server's OpenAPI document, like harness.ts http() does for the other suites. */
async function conformsToOpenApi(url: URL, method: string, answer: RawAnswer): Promise<void> {
  // A HEAD answer names GET's coding but has no body to decode.
  const coding = answer.body.length === 0 ? '' : header(answer, 'content-encoding');
  const body =
    coding === 'gzip'
      ? gunzipSync(answer.body)
      : coding === 'br'
        ? brotliDecompressSync(answer.body)
        : answer.body;
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  await checkAgainstOpenApi({ url: url.href, method, status: answer.status, headers, text: body.toString() });
}

export function header(answer: RawAnswer, name: string): string {
  const value = answer.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/**
 * Everything the server writes from now on: a child's stdout and stderr (startServer), or the log lines of a
 * server in the test's process (serveInProcess).
 */
export function captureOutput(server: Server | InProcessServer): { text(): string } {
  if (!('process' in server)) {
    const from = server.log().length;
    return { text: () => server.log().slice(from) };
  }
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  server.process.stdout?.on('data', collect);
  server.process.stderr?.on('data', collect);
  return { text: () => output };
}

/**
 * Polls `check` until it holds. `ms` only guards against a hang (the test fails instead of waiting for good):
 * generous, as a busy machine is slow, and never a measure of speed.
 */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 60_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** n valid, distinct games; `comment` pads each game's movetext (a larger export). */
export function writeGames(dir: string, name: string, n: number, prefix: string, comment = ''): string {
  const games: string[] = [];
  for (let i = 1; i <= n; i++) {
    games.push(
      [
        `[Event "${prefix} event"]`,
        '[Site "?"]',
        '[Date "2025.02.03"]',
        `[Round "${i}"]`,
        `[White "${prefix} White ${i}"]`,
        `[Black "${prefix} Black ${i}"]`,
        '[Result "1-0"]',
        '',
        `1. e4 ${comment ? `{${comment}} ` : ''}e5 2. Nf3 Nc6 3. Bb5 a6 1-0`,
        '',
      ].join('\n'),
    );
  }
  const path = join(dir, name);
  writeFileSync(path, games.join('\n'));
  return path;
}

export interface Seeded {
  databaseSlug: string;
  /** games.read and user.read tokens of alice in app-one, one more of the same app and user, one of app-two. */
  tokens: { alice: string; aliceAgain: string; aliceOtherApp: string; bob: string };
}

const ALL = 'user.read,databases.read,games.read';

/**
 * Users alice and bob, apps app-one and app-two, alice's database of n games: written through the store as
 * the CLI's commands write them (in-process.ts seed()), on env's store opened in this process and closed
 * again, before the suite's servers start (in this process or as child processes).
 */
export async function seed(env: Env, n = 3, comment = ''): Promise<Seeded> {
  const file = writeGames(env.dir, 'seed.pgn', n, 'Seed', comment);
  return withStore(env, async (store) => {
    const write = seedStore(store);
    for (const user of ['alice', 'bob']) await write.addUser(user);
    for (const app of ['app-one', 'app-two']) await write.addApp(app);
    const database = await write.importPgn(file, 'alice', 'Main');
    const issue = (user: string, app: string) => write.issueToken(user, app, ALL);
    return {
      databaseSlug: database.slug,
      tokens: {
        alice: await issue('alice', 'app-one'),
        aliceAgain: await issue('alice', 'app-one'),
        aliceOtherApp: await issue('alice', 'app-two'),
        bob: await issue('bob', 'app-one'),
      },
    };
  });
}

export interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  [field: string]: unknown;
}

/** The server's JSON log lines (anything else it writes, such as a stack trace, is left out). */
export function logLines(text: string): LogLine[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

export interface OutageSeen {
  first: LogLine;
  /** The counts of the summary lines, in order. */
  summaries: number[];
  back: { line: LogLine; seconds: number; count: number };
}

const count = (text: string) => Number(text.replaceAll(',', ''));
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The words as a pattern, where `requests` is `request` after a count of 1. */
const counted = (text: string) => literal(text).replace('requests', 'requests?');

/**
 * The lines of one outage as the server logs it (src/platform/outage-log.ts): `down` once, at once; then
 * `<down>: N more <more>` lines; then `<back> after X s, N <counted>` once. Checks that nothing else of
 * the outage is logged, and that every summary line is a warning and the last line an info.
 */
export function outageSeen(
  lines: LogLine[],
  words: { down: string; more: string; back: string; counted: string },
): OutageSeen {
  const prefix = words.down.split(',')[0] as string;
  const summary = new RegExp(
    `^${literal(prefix)}: ([0-9,]+) more ${counted(words.more)} in the last [0-9.,]+ s$`,
  );
  const backLine = new RegExp(
    `^${literal(words.back)} after ([0-9.,]+) s, ([0-9,]+) ${counted(words.counted)}$`,
  );
  const firsts = lines.filter((line) => line.msg === words.down);
  assert.equal(firsts.length, 1, `one "${words.down}" line`);
  const first = firsts[0] as LogLine;
  assert.equal(first.level, 40);
  const summaries = lines.filter((line) => summary.test(line.msg));
  for (const line of summaries) assert.equal(line.level, 40, line.msg);
  const backs = lines.filter((line) => backLine.test(line.msg));
  assert.equal(backs.length, 1, `one "${words.back}" line`);
  const back = backs[0] as LogLine;
  assert.equal(back.level, 30);
  const other = lines.filter(
    (line) =>
      (line.msg.startsWith(prefix) || line.msg.startsWith(words.back)) &&
      line !== first &&
      !summaries.includes(line) &&
      line !== back,
  );
  assert.deepEqual(other, [], 'no other line about the outage');
  const [, seconds = '', total = ''] = backLine.exec(back.msg) ?? [];
  return {
    first,
    summaries: summaries.map((line) => count(summary.exec(line.msg)?.[1] ?? '')),
    back: { line: back, seconds: count(seconds), count: count(total) },
  };
}

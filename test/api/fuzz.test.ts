// Fuzzing the real server: thousands of generated requests (methods, paths, query strings, headers, tokens)
// on every endpoint, sent as raw bytes over TCP so that nothing is cleaned up by an HTTP client on the way.
// Nothing may answer 5xx, error bodies keep the error shape and show no stack, and the server stays up.
// Reproducible: the cases come from a seeded PRNG (FUZZ_SEED, FUZZ_CASES override the defaults).
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, test } from 'node:test';
import { type Env, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
import { bearer, raw, type Seeded, seed } from '../helpers/production.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const CASES = Number(process.env.FUZZ_CASES ?? 4000);
const CONCURRENCY = 16;

/** mulberry32: small, fast and good enough to pick cases. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let env: Env;
let seeded: Seeded;
let server: InProcessServer;
const ids = { database: '', game: '', cursor: '' };

before(async () => {
  env = tempEnv();
  seeded = await seed(env, 5);
  server = await serveInProcess(env, { RATE_LIMIT_MAX: '100000000' });
  const alice = bearer(seeded.tokens.alice);
  const databases = JSON.parse(
    (await raw(server.base, '/api/v1/databases', { headers: alice })).body.toString(),
  );
  ids.database = databases.data[0].id;
  const games = JSON.parse((await raw(server.base, '/api/v1/games', { headers: alice })).body.toString());
  ids.game = games.data[0].id;
  const feed = JSON.parse(
    (await raw(server.base, '/api/v1/changes?limit=2', { headers: alice })).body.toString(),
  );
  ids.cursor = feed.nextCursor;
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

interface Case {
  method: string;
  target: string;
  headers: [string, string][];
}

function generator(random: () => number) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number) => random() < p;
  const bytes = (n: number, from = 0, to = 256) =>
    Array.from({ length: n }, () => String.fromCharCode(from + int(to - from))).join('');
  const percentEncoded = (n: number) =>
    Array.from({ length: n }, () => `%${int(256).toString(16).padStart(2, '0')}`).join('');

  const paths = () => [
    '/api/v1/me',
    '/api/v1/databases',
    `/api/v1/databases/${ids.database}/games`,
    `/api/v1/databases/${seeded.databaseSlug}/games`,
    '/api/v1/games',
    `/api/v1/games/${ids.game}`,
    '/api/v1/changes',
    '/healthz',
    '/readyz',
    '/metrics',
  ];
  const names = [
    'limit',
    'offset',
    'format',
    'cursor',
    'since',
    'x',
    'limt',
    '',
    '__proto__',
    'constructor',
    'limit[]',
  ];
  const values = () => [
    '',
    '0',
    '1',
    '-1',
    '200',
    '201',
    '500',
    '501',
    '1e2',
    '0x10',
    '+5',
    ' 10',
    '1.5',
    '9'.repeat(40),
    'pgn',
    'PGN',
    'json',
    'null',
    '[]',
    '%ZZ',
    '%',
    '%00',
    '%F0%9F%99%82',
    '%C0%AF',
    ids.cursor,
    `${ids.cursor}x`,
    ids.cursor.slice(0, -2),
    ids.cursor.split('').reverse().join(''),
    '2026-01-01T00:00:00Z',
    '2026-01-01T00:00:00%2B02:00',
    '2026-13-45T99:99:99Z',
    '0000-00-00',
    'x'.repeat(3000),
  ];
  const query = (): string => {
    if (chance(0.25)) return '';
    if (chance(0.05)) return `?${pick(['&&&', '=', '==', '&=&', '?', '#frag', 'a=1&a=2', ';;', '%'])}`;
    const parts: string[] = [];
    for (let i = 0, n = 1 + int(3); i < n; i++) {
      const name = chance(0.9) ? pick(names) : percentEncoded(1 + int(4));
      const value = chance(0.85) ? pick(values()) : percentEncoded(int(20));
      parts.push(chance(0.05) ? name : `${name}=${value}`);
    }
    return `?${parts.join('&')}`;
  };
  const path = (): string => {
    const base = pick(paths());
    if (chance(0.8)) return base;
    return pick([
      `${base}/`,
      `${base}/extra`,
      base.toUpperCase(),
      `${base}%2F..%2F..`,
      base.replace(/[0-9a-f-]{36}/, percentEncoded(8)),
      base.replace(/[0-9a-f-]{36}/, 'x'.repeat(3000)),
      base.replace(/[0-9a-f-]{36}/, `${ids.game}%00`),
      `/api/v1/${percentEncoded(1 + int(6))}`,
      `/api/v2${base.slice(7)}`,
      '//api/v1/games',
      '/api/v1/games/..%2Fme',
      '*',
      `/${bytes(4, 0x21, 0x7f).replace(/[ ?#%]/g, 'a')}`,
    ]);
  };
  const authorization = (): string | undefined => {
    const tokens = Object.values(seeded.tokens);
    return pick<() => string | undefined>([
      () => undefined,
      () => `Bearer ${pick(tokens)}`,
      () => `Bearer ${pick(tokens)}`,
      () => `bearer ${pick(tokens)}`,
      () => `Bearer  ${pick(tokens)}`,
      () => `Bearer ${pick(tokens)} `,
      () => `Bearer ${pick(tokens).slice(0, -1)}`,
      () => `Bearer ${pick(tokens)}x`,
      () => `Bearer ${pick(tokens).toUpperCase()}`,
      () => 'Bearer ',
      () => 'Bearer',
      () => `Basic ${Buffer.from('alice:secret').toString('base64')}`,
      () => `Bearer cp_${bytes(43, 0x41, 0x5b)}`,
      () => `Bearer ${'A'.repeat(600)}`,
      () => `Bearer ${'A'.repeat(10_000)}`,
      () => `Bearer ${bytes(20, 0x21, 0x7f)}`,
      () => `Bearer ${bytes(10, 0x80, 0x100)}`,
      () => `${pick(tokens)}`,
      () => `Bearer ${pick(tokens)}, Bearer ${pick(tokens)}`,
    ])();
  };
  const extraHeaders = (): [string, string][] => {
    const out: [string, string][] = [];
    const add = (name: string, values: readonly string[]) => {
      if (chance(0.3)) out.push([name, pick(values)]);
    };
    add('Accept', [
      'application/x-chess-pgn',
      'application/vnd.chess-pgn;q=0.5, application/json',
      'application/json;q=0, application/x-chess-pgn;q=abc',
      '*/*;q=0',
      'text/html',
      ';;;,,,',
      `${'a/b;q=0.1, '.repeat(200)}application/x-chess-pgn`,
      'application/x-chess-pgn;q=1.0000001',
    ]);
    add('Accept-Encoding', [
      'gzip',
      'br',
      'br;q=0, gzip',
      '*',
      'identity;q=0',
      'gzip;q=-1',
      'x-gzip',
      'zstd',
      ',,;q=',
    ]);
    add('If-None-Match', [
      '*',
      '"x"',
      'W/"x"',
      '"',
      'W/',
      '""',
      `"${'a'.repeat(5000)}"`,
      '"a", W/"b", *',
      'garbage',
    ]);
    add('X-Request-Id', ['abc', '', 'x'.repeat(200), 'a b', '../../etc', '%00', bytes(10, 0x21, 0x7f)]);
    add('Origin', ['https://app.example', 'null', '*', bytes(8, 0x21, 0x7f)]);
    add('Access-Control-Request-Method', ['GET', 'POST', 'DELETE', '', 'get']);
    add('Access-Control-Request-Headers', ['authorization', 'x-custom, if-none-match', '*']);
    add('Content-Type', ['application/json', 'text/plain', 'multipart/form-data; boundary=x']);
    add('X-No-Compression', ['1']);
    add('Range', ['bytes=0-10', 'bytes=-1', 'lines=1-2']);
    add('X-Forwarded-For', ['1.2.3.4', 'not an ip', '::1']);
    if (chance(0.02)) out.push(['X-Big', 'y'.repeat(20_000)]);
    if (chance(0.02)) out.push(['X-Ctl', `a${String.fromCharCode(1)}b`]);
    return out;
  };
  return (): Case => {
    const method = pick([
      'GET',
      'GET',
      'GET',
      'GET',
      'HEAD',
      'OPTIONS',
      'POST',
      'PUT',
      'PATCH',
      'DELETE',
      'TRACE',
      'PROPFIND',
    ]);
    const headers = extraHeaders();
    const auth = authorization();
    if (auth !== undefined) headers.push(['Authorization', auth]);
    return { method, target: path() + query(), headers };
  };
}

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** Sends the request bytes as they are and reads the answer until the server closes the connection. */
function send(port: number, c: Case): Promise<Answer> {
  const head = [
    `${c.method} ${c.target} HTTP/1.1`,
    'Host: 127.0.0.1',
    ...c.headers.map(([n, v]) => `${n}: ${v}`),
  ];
  const bytes = Buffer.from(`${head.join('\r\n')}\r\nConnection: close\r\n\r\n`, 'latin1');
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.setTimeout(15_000, () => socket.destroy(new Error('no answer in 15 s')));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const lines = text.slice(0, end).split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0);
      const headers = new Map<string, string>();
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim());
      }
      resolve({ status, headers, body: text.slice(end + 4) });
    });
    // Written, not ended: like real clients, keep the write side open and let Connection: close end it.
    socket.write(bytes);
  });
}

const describeCase = (index: number, c: Case) =>
  `case ${index} (FUZZ_SEED=${SEED}): ${c.method} ${c.target.slice(0, 200)} ${JSON.stringify(
    c.headers.map(([n, v]) => `${n}: ${v.slice(0, 80)}`),
  )}`;

test(`${CASES} generated requests: no 5xx, the error shape everywhere, the server alive at the end`, async () => {
  const next = generator(prng(SEED));
  const cases = Array.from({ length: CASES }, next);
  const port = Number(new URL(server.base).port);
  const failures: string[] = [];
  const statuses = new Map<number, number>();
  let index = 0;
  const worker = async () => {
    while (index < cases.length) {
      const i = index++;
      const c = cases[i] as Case;
      const answer = await send(port, c).catch((error: Error) => ({ error }));
      if ('error' in answer) {
        failures.push(`${describeCase(i, c)}: ${answer.error.message}`);
        continue;
      }
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status < 200 || answer.status >= 500) {
        failures.push(`${describeCase(i, c)}: status ${answer.status} ${answer.body.slice(0, 200)}`);
        continue;
      }
      if (/\n\s+at |node_modules|\.ts:\d/.test(answer.body)) {
        failures.push(`${describeCase(i, c)}: a stack trace in the body`);
      }
      const json = answer.headers.get('content-type')?.startsWith('application/json');
      if (
        answer.status >= 400 &&
        json &&
        c.method !== 'HEAD' &&
        answer.headers.get('transfer-encoding') !== 'chunked'
      ) {
        const body = JSON.parse(answer.body) as Record<string, unknown>;
        if (Object.keys(body).sort().join() !== 'error,error_description') {
          failures.push(`${describeCase(i, c)}: not the error shape: ${answer.body.slice(0, 200)}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  failures.sort((a, b) => Number(/status 0/.test(b)) - Number(/status 0/.test(a)));
  const summary = [...statuses].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures; statuses ${summary.join(', ')}`);
  // The cases reached the handlers, not only the front door.
  assert.ok((statuses.get(200) ?? 0) > CASES / 20, `statuses ${summary.join(', ')}`);
  assert.ok((statuses.get(400) ?? 0) > CASES / 20, `statuses ${summary.join(', ')}`);
  // The server runs in this process: one that crashed would have ended the test with it.
  const health = await raw(server.base, '/healthz');
  assert.equal(health.status, 200);
  const games = await raw(server.base, '/api/v1/games', { headers: bearer(seeded.tokens.alice) });
  assert.equal(games.status, 200);
});

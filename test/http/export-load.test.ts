// The database PGN export under load, on a real server: what an export costs the process while its
// client reads slowly or not at all, measured from outside through /metrics.
import assert from 'node:assert/strict';
import { type ClientRequest, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { type Env, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import { bearer, raw, type Seeded, seed } from './production-helpers.ts';

const GAMES = 120;
/** Each game carries a 100 KB comment: 12 MB of PGN, as engine games with long analysis are. */
const COMMENT = 'analysis '.repeat(11_000).trim();

let env: Env;
let server: Server;
let seeded: Seeded;
before(async () => {
  env = tempEnv();
  seeded = await seed(env, GAMES, COMMENT);
  server = await startServer(env);
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

const exportPath = () => `/api/v1/databases/${seeded.databaseSlug}/games?format=pgn`;

async function heapUsedMb(): Promise<number> {
  const text = (await raw(server.base, '/metrics')).body.toString();
  const match = /^nodejs_heap_size_used_bytes (\S+)$/m.exec(text);
  assert.ok(match?.[1], 'nodejs_heap_size_used_bytes in /metrics');
  return Number(match[1]) / 2 ** 20;
}

/** Starts an export and stops reading it once its head is in; the server is left with a stalled client. */
function pausedExport(): Promise<ClientRequest> {
  const url = new URL(server.base + exportPath());
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: url.pathname + url.search }, (res) => {
      assert.equal(res.statusCode, 200);
      res.pause();
      resolve(req);
    });
    req.setHeader('authorization', `Bearer ${seeded.tokens.alice}`);
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}

describe('PGN export under load', () => {
  test('the export holds every game, in order, across its batches', async () => {
    const answer = await raw(server.base, exportPath(), { headers: bearer(seeded.tokens.alice) });
    assert.equal(answer.status, 200);
    const rounds = [...answer.body.toString().matchAll(/^\[Round "(\d+)"\]$/gm)].map((m) => Number(m[1]));
    assert.deepEqual(
      rounds,
      Array.from({ length: GAMES }, (_, i) => i + 1),
    );
  });

  test('stalled clients hold about a megabyte each, not a batch of 1000 games', async () => {
    // Each export read up to 1000 games at once and kept them while its client did not read: 8 stalled
    // exports of these 12 MB held about 100 MB (20 of TCEC's 44 MB, 700 MB). Batches now stop at 1 MB.
    const start = await heapUsedMb();
    const requests = await Promise.all(Array.from({ length: 8 }, pausedExport));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const stalled = await heapUsedMb();
    for (const req of requests) req.destroy();
    assert.ok(stalled - start < 40, `heap grew from ${start.toFixed(0)} to ${stalled.toFixed(0)} MB`);
    // The server is still well: a full export after the stalled ones went away.
    const answer = await raw(server.base, exportPath(), { headers: bearer(seeded.tokens.alice) });
    assert.equal(answer.status, 200);
  });
});

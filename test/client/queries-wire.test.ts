// The client's filtered lists, games by id and NDJSON export on the wire, against an HTTP server of the
// test's own that records each request and answers as told: what the client sends (the filters under their
// names, 200 ids a request in the order given), and how it reads an export (lines split across chunks, the
// cursor header, a body that breaks off or is not NDJSON, an early break that ends the download, constant
// memory). test/client/queries.test.ts runs the same methods against a real server.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { inspect } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  ChessportClient,
  ChessportError,
  ChessportNetworkError,
  type GameDetail,
} from '../../packages/client/src/index.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let handler: Handler = (_req, res) => res.end();
const seen: URL[] = [];
const closed: string[] = [];
let base = '';
let stopServer: () => Promise<void>;

before(async () => {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://test');
    seen.push(url);
    res.on('close', () => {
      if (!res.writableFinished) closed.push(url.pathname);
    });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stopServer = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
});
after(async () => stopServer?.());

const client = () =>
  new ChessportClient({ baseUrl: base, token: 'cp_x', retry: { maxRetries: 0, backoffMs: 1 } });

/** A game detail with this id, its PGN `size` characters long. */
const detail = (id: string, size = 40): GameDetail => ({
  id,
  slug: `a-vs-b-2024-${id}`,
  databaseId: 'db',
  event: null,
  date: '2024-03-01',
  result: '1-0',
  eco: 'B90',
  white: { name: 'A', elo: null, fideId: null, country: null },
  black: { name: 'B', elo: null, fideId: null, country: null },
  fen: 'startpos',
  moves: '',
  pgn: 'x'.repeat(size),
  metadata: {},
  updatedAt: '2024-03-01T00:00:00.000Z',
});

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};

/** Answers an NDJSON export with these chunks of text, written one by one. */
const ndjson =
  (chunks: string[], headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-changes-cursor': 'c_42', ...headers });
    for (const chunk of chunks) res.write(chunk);
    res.end();
  };

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('it succeeded');
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

describe('filters', () => {
  test('each filter goes out under its own name, a Date as ISO 8601, undefined ones left out', async () => {
    handler = (_req, res) => json(res, { data: [] });
    seen.length = 0;
    const unset: { eco?: string } = {};
    await client().games({
      dateFrom: '2024-03-01',
      dateTo: '2024-03-31',
      updatedSince: new Date('2024-04-01T10:00:00Z'),
      player: 'Carlsen, Magnus',
      fideId: '1503014',
      color: 'white',
      result: '1/2-1/2',
      eco: unset.eco,
      event: 'Tata Steel & Co',
      limit: 10,
    });
    await client().databaseGames('classics', { eco: 'B9', offset: 50 });
    await collect(client().allGames({ result: '*' }));
    assert.deepEqual(
      seen.map((url) => `${url.pathname}?${url.searchParams}`),
      [
        '/api/v1/games?dateFrom=2024-03-01&dateTo=2024-03-31&updatedSince=2024-04-01T10%3A00%3A00.000Z&' +
          'player=Carlsen%2C+Magnus&fideId=1503014&color=white&result=1%2F2-1%2F2&event=Tata+Steel+%26+Co&limit=10',
        '/api/v1/databases/classics/games?eco=B9&offset=50',
        '/api/v1/games?result=*',
      ],
    );
  });

  test('an invalid Date is a TypeError naming the filter, before any request', async () => {
    seen.length = 0;
    const error = await thrown(client().games({ updatedSince: new Date('soon') }));
    assert.ok(error instanceof TypeError, inspect(error));
    assert.equal(error.message, 'updatedSince is an invalid Date');
    assert.equal(seen.length, 0);
  });
});

describe('gamesByIds', () => {
  test('450 ids are 3 requests of 200, 200 and 50, in the order given; the answers joined in order', async () => {
    // The server leaves out every third id, as it does the ids of other users and unknown ones.
    handler = (req, res) => {
      const ids = new URL(req.url ?? '/', 'http://test').searchParams.get('ids')?.split(',') ?? [];
      json(res, { data: ids.filter((_id, i) => i % 3 !== 2).map((id) => detail(id)) });
    };
    seen.length = 0;
    const ids = Array.from({ length: 450 }, (_v, i) => `id-${449 - i}`);
    const games = await client().gamesByIds(ids);
    assert.deepEqual(
      seen.map((url) => url.searchParams.get('ids')?.split(',').length),
      [200, 200, 50],
    );
    assert.deepEqual(
      seen.flatMap((url) => url.searchParams.get('ids')?.split(',')),
      ids,
      'every id once, in the order given',
    );
    const kept = [0, 200, 400].flatMap((start) =>
      ids.slice(start, start + 200).filter((_id, i) => i % 3 !== 2),
    );
    assert.deepEqual(
      games.map((game) => game.id),
      kept,
    );
  });

  test('a repeated id is asked for once, where it first appears, also across requests', async () => {
    handler = (req, res) => {
      const ids = new URL(req.url ?? '/', 'http://test').searchParams.get('ids')?.split(',') ?? [];
      json(res, { data: ids.map((id) => detail(id)) });
    };
    seen.length = 0;
    const ids = [...Array.from({ length: 250 }, (_v, i) => `id-${i}`), 'id-3', 'id-249', 'id-250'];
    const games = await client().gamesByIds(ids);
    assert.deepEqual(
      seen.map((url) => url.searchParams.get('ids')?.split(',').length),
      [200, 51],
    );
    assert.deepEqual(
      games.map((game) => game.id),
      Array.from({ length: 251 }, (_v, i) => `id-${i}`),
    );
  });

  test('no ids, no request; an id that is no string, empty, or holds a comma is a TypeError', async () => {
    seen.length = 0;
    assert.deepEqual(await client().gamesByIds([]), []);
    for (const ids of [[''], ['a,b'], [42 as unknown as string], 'a' as unknown as string[]])
      assert.ok((await thrown(client().gamesByIds(ids))) instanceof TypeError, inspect(ids));
    assert.equal(seen.length, 0);
  });

  test('an answer without a data array is a ChessportError unexpected_response', async () => {
    handler = (_req, res) => json(res, { data: { id: 'x' } });
    const error = await thrown(client().gamesByIds(['x']));
    assert.ok(error instanceof ChessportError, inspect(error));
    assert.equal(error.error, 'unexpected_response');
  });
});

describe('exportNdjson', () => {
  test('asks for NDJSON of /games or of a database, with the filters; gives the cursor and each game', async () => {
    const games = ['a', 'b', 'c'].map((id) => detail(id));
    const text = games.map((game) => `${JSON.stringify(game)}\n`).join('');
    // Lines split anywhere: inside a line, inside a multi-byte character, at a line break.
    const cut = [5, text.indexOf('\n') + 1, text.length - 3];
    handler = ndjson([
      text.slice(0, cut[0]),
      text.slice(cut[0], cut[1]),
      text.slice(cut[1], cut[2]),
      text.slice(cut[2]),
    ]);
    seen.length = 0;
    const exported = await client().exportNdjson({ player: 'A', color: 'white' });
    assert.equal(exported.cursor, 'c_42');
    assert.deepEqual(await collect(exported), games);
    const fromDatabase = await client().exportNdjson({ database: 'my db', eco: 'B' });
    assert.deepEqual(await collect(fromDatabase), games);
    assert.deepEqual(
      seen.map((url) => `${url.pathname}?${url.searchParams}`),
      [
        '/api/v1/games?player=A&color=white&format=ndjson',
        '/api/v1/databases/my%20db/games?eco=B&format=ndjson',
      ],
    );
  });

  test('UTF-8 split inside a character, and empty lines, are read right', async () => {
    const game = {
      ...detail('u'),
      white: { name: 'Ljubojević, Ljubomir', elo: null, fideId: null, country: null },
    };
    const bytes = Buffer.from(`${JSON.stringify(game)}\n\n`);
    const at = bytes.indexOf(Buffer.from('ć')) + 1;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(bytes.subarray(0, at));
      res.end(bytes.subarray(at));
    };
    const exported = await client().exportNdjson();
    assert.equal(exported.cursor, null, 'no X-Changes-Cursor: null');
    assert.deepEqual(await collect(exported), [game]);
  });

  test('an answer that ends inside a line broke off: a ChessportNetworkError, truncated, after the whole lines', async () => {
    handler = ndjson([`${JSON.stringify(detail('a'))}\n{"id":"b","sl`]);
    const got: string[] = [];
    const error = await thrown(
      (async () => {
        for await (const game of await client().exportNdjson()) got.push(game.id);
      })(),
    );
    assert.deepEqual(got, ['a']);
    assert.ok(error instanceof ChessportNetworkError, inspect(error));
    assert.equal(error.truncated, true);
    assert.match(
      error.message,
      /failed after 1 attempt: the answer broke off \(the answer ended inside line 2/,
    );
  });

  test('a connection cut mid-answer is a ChessportNetworkError, truncated, not retried', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write(`${JSON.stringify(detail('a'))}\n{"id":`);
      setImmediate(() => res.destroy());
    };
    seen.length = 0;
    const retrying = new ChessportClient({
      baseUrl: base,
      token: 'cp_x',
      retry: { maxRetries: 3, backoffMs: 1 },
    });
    const error = await thrown(collect(await retrying.exportNdjson()));
    assert.ok(error instanceof ChessportNetworkError, inspect(error));
    assert.equal(error.truncated, true);
    assert.equal(seen.length, 1, 'not asked again');
  });

  test('a line that is no JSON object, or an answer that is no NDJSON, is a ChessportError unexpected_response', async () => {
    for (const line of ['[1,2]', 'not json', 'null']) {
      handler = ndjson([`${JSON.stringify(detail('a'))}\n${line}\n`]);
      const error = await thrown(collect(await client().exportNdjson()));
      assert.ok(error instanceof ChessportError, inspect(error));
      assert.equal(error.error, 'unexpected_response');
      assert.match(error.error_description, /line 2 is not a JSON object/);
    }
    handler = (_req, res) => json(res, { data: [] });
    const error = await thrown(client().exportNdjson());
    assert.ok(error instanceof ChessportError, inspect(error));
    assert.match(error.error_description, /not NDJSON \(application\/json/);
  });

  test('breaking out of the loop ends the download; the export is iterated once', async () => {
    const line = `${JSON.stringify(detail('a', 1000))}\n`;
    // An endless export: the server writes until the client goes.
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      const more = () => {
        while (!res.destroyed && res.write(line));
      };
      res.on('drain', more);
      more();
    };
    closed.length = 0;
    const exported = await client().exportNdjson();
    let read = 0;
    for await (const _game of exported) if (++read === 50) break;
    assert.equal(read, 50);
    await waitFor(() => closed.length === 1, 'the server sees the download end');
    await assert.rejects(collect(exported), /iterated once/);
    closed.length = 0;
    const cancelled = await client().exportNdjson();
    await cancelled.cancel();
    await waitFor(() => closed.length === 1, 'cancel() ends the download');
  });

  test('a large export is read in constant memory: the heap does not grow with it', async () => {
    // 60 MB of games of 30 KB each: held whole, they would grow the heap by far more than the bound.
    const line = `${JSON.stringify(detail('big', 30_000))}\n`;
    const lines = 2000;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      let sent = 0;
      const more = () => {
        while (sent < lines) {
          sent++;
          if (!res.write(line)) return;
        }
        res.end();
      };
      res.on('drain', more);
      more();
    };
    const exported = await client().exportNdjson();
    // What the heap holds after a full collection: the games still referenced, not the garbage that a heap
    // grown large by the tests before this one (a process of files: scripts/test-pool.ts) collects late.
    const held = () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    const before = held();
    let peak = before;
    let read = 0;
    for await (const game of exported) {
      assert.equal(game.pgn.length, 30_000);
      if (++read % 100 === 0) peak = Math.max(peak, held());
    }
    assert.equal(read, lines);
    assert.ok(peak - before < 30e6, `the heap held ${((peak - before) / 1e6).toFixed(0)} MB more for 60 MB`);
  });
});

/** V8's full collection, without `--expose-gc` on the command line (the test runner starts this process). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Waits until `done()` holds, checking every 10 ms; no fixed time, however slow the machine. */
async function waitFor(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; !done(); i++) {
    if (i > 6000) assert.fail(`${what}: not after a minute`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

// Every field of every resource, as the spec and docs/design.md 1-17 shape it, seen through HTTP.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliJson, FIXTURES, http, importPgn, issueToken } from '../helpers/harness.ts';
import { bearer } from '../helpers/production.ts';
import { storeText } from '../helpers/stores.ts';
import { makeWorld, type World } from '../helpers/world.ts';

let world: World;
before(async () => {
  world = await makeWorld();
});
after(async () => world?.stop());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SUMMARY_KEYS = ['black', 'databaseId', 'date', 'eco', 'event', 'id', 'result', 'slug', 'white'];
const DETAIL_KEYS = [...SUMMARY_KEYS, 'fen', 'metadata', 'moves', 'pgn', 'updatedAt'].sort();
const PLAYER_KEYS = ['country', 'elo', 'fideId', 'name'];
// The largest integer a JavaScript number holds exactly.
const MAX_OFFSET = '9007199254740991';
const START_FEN = 'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1';

type Json = Record<string, unknown>;
type GameSummary = {
  id: string;
  slug: string;
  databaseId: string;
  white: Json;
  black: Json;
  [key: string]: unknown;
};
const get = <T = Json>(path: string, token = world.tokens.alice, headers: Record<string, string> = {}) =>
  http<T>(world.base, path, { token, headers });

async function allGames(path: string, limit: number): Promise<GameSummary[]> {
  const seen: GameSummary[] = [];
  let next: string | null = `${path}?limit=${limit}`;
  while (next) {
    const res: Awaited<ReturnType<typeof get<{ data: GameSummary[] }>>> = await get<{ data: GameSummary[] }>(
      next,
    );
    assert.equal(res.status, 200);
    seen.push(...res.json.data);
    const link = res.headers.get('link');
    const m = link && /<\/api\/v1([^>]+)>; rel="next"/.exec(link);
    next = m ? (m[1] as string) : null;
  }
  return seen;
}

describe('GET /me', () => {
  test('the user profile in a data envelope, every field present', async () => {
    const res = await get<{ data: Json }>('/me');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['data']);
    assert.deepEqual(Object.keys(res.json.data).sort(), ['email', 'id', 'image', 'name']);
    assert.equal(res.json.data.name, 'Alice Example');
    assert.equal(res.json.data.email, 'alice@example.org');
    assert.equal(res.json.data.image, 'https://example.org/alice.png');
    assert.match(String(res.json.data.id), UUID);
  });

  test('unknown profile fields are null, not omitted', async () => {
    const res = await get<{ data: Json }>('/me', world.tokens.bob);
    assert.deepEqual({ ...res.json.data, id: 'x' }, { id: 'x', name: null, email: null, image: null });
  });

  test('id is pairwise: one app sees one id, another app another, never the internal id or login', async () => {
    const one = (await get<{ data: { id: string } }>('/me', world.tokens.alice)).json.data.id;
    const oneAgain = (await get<{ data: { id: string } }>('/me', world.tokens.alice2)).json.data.id;
    const two = (await get<{ data: { id: string } }>('/me', world.tokens.aliceOtherApp)).json.data.id;
    const bob = (await get<{ data: { id: string } }>('/me', world.tokens.bob)).json.data.id;
    assert.equal(one, oneAgain);
    assert.notEqual(one, two);
    assert.notEqual(one, bob);
    for (const id of [one, two]) {
      assert.notEqual(id, world.aliceInternalId);
      assert.ok(!id.includes('alice'));
    }
  });
});

describe('GET /databases', () => {
  test("the user's databases only, every field present", async () => {
    const res = await get<{ data: Json[] }>('/databases');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['data']);
    assert.deepEqual(
      res.json.data.map((d) => d.slug),
      ['main-games', 'classics'],
    );
    for (const db of res.json.data) {
      assert.deepEqual(Object.keys(db).sort(), [
        'createdAt',
        'gameCount',
        'id',
        'maxGames',
        'name',
        'private',
        'slug',
        'updatedAt',
      ]);
      assert.match(String(db.id), UUID);
      assert.match(String(db.createdAt), ISO_MS);
      assert.match(String(db.updatedAt), ISO_MS);
      assert.equal(db.private, false);
      assert.equal(db.maxGames, null);
    }
    assert.equal(res.json.data[0]?.name, 'Main Games');
    const bob = await get<{ data: Json[] }>('/databases', world.tokens.bob);
    assert.deepEqual(
      bob.json.data.map((d) => d.id),
      [world.bob.db.id],
    );
  });

  test('private and maxGames as set by the operator', async () => {
    await cliJson(world.env, [
      'databases',
      'add',
      'Secret',
      '--user',
      'bob',
      '--private',
      '--max-games',
      '5',
    ]);
    const res = await get<{ data: Json[] }>('/databases', world.tokens.bob);
    const secret = res.json.data.find((d) => d.name === 'Secret');
    assert.equal(secret?.private, true);
    assert.equal(secret?.maxGames, 5);
  });
});

describe('game lists', () => {
  test('GET /games: list items without moves or PGN, in import order, all databases', async () => {
    const res = await get<{ data: GameSummary[] }>('/games');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['data']);
    assert.equal(res.json.data.length, 7);
    assert.equal(res.headers.get('link'), null, 'one page, no next link');
    for (const game of res.json.data) {
      assert.deepEqual(Object.keys(game).sort(), SUMMARY_KEYS);
      assert.deepEqual(Object.keys(game.white).sort(), PLAYER_KEYS);
      assert.deepEqual(Object.keys(game.black).sort(), PLAYER_KEYS);
    }
    assert.deepEqual(
      res.json.data.map((g) => g.white.name),
      [
        'Carlsen, Magnus',
        'White, Player',
        'Nobody',
        'Morphy, Paul',
        'Anderssen, Adolf',
        'Anderssen, Adolf',
        'Legall de Kermeur, Francois Antoine de',
      ],
    );
    const [first] = res.json.data;
    assert.deepEqual(
      { ...first, id: undefined, slug: undefined },
      {
        id: undefined,
        slug: undefined,
        databaseId: world.alice.main.id,
        event: 'Test Championship',
        date: '2024-03-15',
        result: '1-0',
        eco: 'C88',
        white: { name: 'Carlsen, Magnus', elo: 2830, fideId: '1503014', country: 'NOR' },
        black: { name: 'Nepomniachtchi, Ian', elo: 2795, fideId: '4168119', country: 'RUS' },
      },
    );
    const [, second, third] = res.json.data;
    assert.equal(second?.date, null, 'a partial date is null');
    assert.equal(second?.eco, null);
    assert.equal(second?.white.elo, null, 'an Elo of "?" is null');
    assert.equal(second?.result, '1/2-1/2');
    assert.equal(third?.event, null, 'an Event of "?" is null');
    assert.equal(third?.black.name, null, 'a player of "?" is null');
    assert.equal(third?.result, '*');
  });

  test('paging with small limits visits every game exactly once, with Link rel="next" while more exist', async () => {
    const whole = (await get<{ data: GameSummary[] }>('/games?limit=200')).json.data.map((g) => g.id);
    for (const limit of [1, 2, 3, 6, 7]) {
      const paged = (await allGames('/games', limit)).map((g) => g.id);
      assert.deepEqual(paged, whole, `limit ${limit}`);
    }
    const page = await get('/games?limit=2&offset=2');
    assert.equal(
      page.headers.get('link'),
      '</api/v1/games?limit=2&offset=4>; rel="next", </api/v1/games?limit=2&offset=6>; rel="last", ' +
        '</api/v1/games?limit=2&offset=0>; rel="prev"',
    );
    const last = await get<{ data: unknown[] }>('/games?limit=5&offset=5');
    assert.equal(last.json.data.length, 2);
    assert.equal(last.headers.get('link'), '</api/v1/games?limit=5&offset=0>; rel="prev"');
    const beyond = await get<{ data: unknown[] }>('/games?offset=100');
    assert.deepEqual(beyond.json, { data: [] });
  });

  test('Link targets are root-relative also for a request in absolute-form, whatever host it names', async () => {
    // RFC 9112 3.2.2: a server must accept `GET http://host/path`; the client chose that scheme and host.
    const { port } = new URL(world.base);
    for (const path of [
      '/api/v1/games?limit=2&offset=2',
      `/api/v1/databases/${world.alice.main.slug}/games?limit=1`,
    ]) {
      const link = await new Promise<string>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path: `http://elsewhere.example${path}`,
            headers: bearer(world.tokens.alice),
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(String(res.headers.link)));
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(link, (await get(path.slice('/api/v1'.length))).headers.get('link'), path);
      assert.match(link, /^<\/api\/v1\//, path);
    }
  });

  test('GET /databases/{id}/games by UUID and by slug: that database only, list item shape', async () => {
    const byId = await get<{ data: GameSummary[] }>(`/databases/${world.alice.main.id}/games`);
    const bySlug = await get<{ data: GameSummary[] }>(`/databases/${world.alice.main.slug}/games`);
    assert.equal(byId.status, 200);
    assert.deepEqual(Object.keys(byId.json), ['data']);
    assert.deepEqual(byId.json, bySlug.json);
    assert.equal(byId.json.data.length, 3);
    for (const game of byId.json.data) {
      assert.deepEqual(Object.keys(game).sort(), SUMMARY_KEYS);
      assert.equal(game.databaseId, world.alice.main.id);
    }
    const paged = await allGames(`/databases/${world.alice.classics.slug}/games`, 3);
    assert.equal(paged.length, 4);
    assert.equal(new Set(paged.map((g) => g.id)).size, 4);
  });

  const badParams: [string, string][] = [
    ['limit=0', 'limit must be an integer from 1 to 200'],
    ['limit=201', 'limit must be an integer from 1 to 200'],
    ['limit=-1', 'limit must be an integer from 1 to 200'],
    ['limit=abc', 'limit must be an integer from 1 to 200'],
    ['limit=1.5', 'limit must be an integer from 1 to 200'],
    ['limit=', 'limit must be an integer from 1 to 200'],
    ['limit=1e2', 'limit must be an integer from 1 to 200'],
    ['limit=%2010', 'limit must be an integer from 1 to 200'],
    ['limit=0x10', 'limit must be an integer from 1 to 200'],
    ['limit=99999999999999999999', 'limit must be an integer from 1 to 200'],
    [`limit=${'9'.repeat(400)}`, 'limit must be an integer from 1 to 200'],
    ['offset=-1', `offset must be an integer from 0 to ${MAX_OFFSET}`],
    ['offset=x', `offset must be an integer from 0 to ${MAX_OFFSET}`],
    ['offset=9999999999999999', `offset must be an integer from 0 to ${MAX_OFFSET}`],
    ['offset=9007199254740992', `offset must be an integer from 0 to ${MAX_OFFSET}`],
    [`offset=${'9'.repeat(400)}`, `offset must be an integer from 0 to ${MAX_OFFSET}`],
    ['limit=1&limit=2', 'limit must be given once'],
    ['limt=10', 'unknown parameter "limt"'],
    // Names of Object.prototype members are unknown parameters like any other.
    ...['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf'].map((name): [string, string] => [
      `${name}=1`,
      `unknown parameter "${name}"`,
    ]),
  ];
  for (const [query, message] of badParams) {
    const shown = query.length > 40 ? `${query.slice(0, 30)}… (${query.length} characters)` : query;
    test(`bad parameter ${shown}: 400 invalid_request naming it`, async () => {
      for (const path of ['/games', `/databases/${world.alice.main.id}/games`]) {
        const res = await get(`${path}?${query}`);
        assert.equal(res.status, 400, `${path}?${query}`);
        assert.deepEqual(res.json, { error: 'invalid_request', error_description: message });
      }
    });
  }

  test('/me and /databases take no parameters, the lists no feed parameters: 400 naming them', async () => {
    const [game] = (await get<{ data: GameSummary[] }>('/games?limit=1')).json.data;
    const cases: [string, string][] = [
      ['/me?x=1', 'unknown parameter "x"'],
      ['/me?limit=1', 'unknown parameter "limit"'],
      ['/databases?limit=5', 'unknown parameter "limit"'],
      ['/databases?offset=0', 'unknown parameter "offset"'],
      ['/games?cursor=x', 'unknown parameter "cursor"'],
      [`/games/${game?.id}?format=pgn&format=pgn`, 'format must be given once'],
      [`/databases/${world.alice.main.slug}/games?format=pgn&format=pgn`, 'format must be given once'],
    ];
    for (const [path, message] of cases) {
      const res = await get(path);
      assert.equal(res.status, 400, path);
      assert.deepEqual(res.json, { error: 'invalid_request', error_description: message }, path);
    }
    // An empty query is no parameter.
    assert.equal((await get('/me?')).status, 200);
    assert.equal((await get('/databases?')).status, 200);
  });

  test('limit 200 and offset 0 are in range', async () => {
    assert.equal((await get('/games?limit=200&offset=0')).status, 200);
    assert.equal((await get('/games?limit=1')).status, 200);
  });

  test('leading zeros are allowed, however many: 00000000000000000001 is 1', async () => {
    const one = await get('/games?limit=1&offset=1');
    for (const query of ['limit=00000000000000000001&offset=0001', `limit=${'0'.repeat(400)}1&offset=01`]) {
      const res = await get(`/games?${query}`);
      assert.equal(res.status, 200, query);
      assert.equal(res.text, one.text);
      assert.equal(
        res.headers.get('link'),
        '</api/v1/games?limit=1&offset=2>; rel="next", </api/v1/games?limit=1&offset=6>; rel="last", ' +
          '</api/v1/games?limit=1&offset=0>; rel="prev"',
      );
    }
  });

  test('the largest offset (2^53 - 1) is an empty page on both lists, with rel="prev"', async () => {
    for (const path of ['/games', `/databases/${world.alice.main.id}/games`]) {
      const res = await get<{ data: unknown[] }>(`${path}?offset=${MAX_OFFSET}`);
      assert.equal(res.status, 200, path);
      assert.deepEqual(res.json.data, []);
      assert.match(res.headers.get('link') ?? '', /\?offset=9007199254740941&limit=50>; rel="prev"$/);
    }
  });
});

describe('GET /games/{id}', () => {
  const firstIds = async () => (await get<{ data: GameSummary[] }>('/games')).json.data.map((g) => g.id);

  test('full detail: fields, players, UCI moves, final FEN, metadata, export PGN', async () => {
    const [id] = await firstIds();
    const res = await get<{ data: Json }>(`/games/${id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json), ['data']);
    const game = res.json.data;
    assert.deepEqual(Object.keys(game).sort(), DETAIL_KEYS);
    assert.equal(game.id, id);
    assert.equal(game.result, '1-0');
    assert.deepEqual(game.white, { name: 'Carlsen, Magnus', elo: 2830, fideId: '1503014', country: 'NOR' });
    assert.deepEqual(game.black, {
      name: 'Nepomniachtchi, Ian',
      elo: 2795,
      fideId: '4168119',
      country: 'RUS',
    });
    assert.equal(game.moves, 'e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 e1g1 g8f6 f1e1');
    assert.equal(game.fen, 'r1bqkb1r/1ppp1ppp/p1n2n2/1B2p3/4P3/5N2/PPPP1PPP/RNBQR1K1 b kq - 3 5');
    assert.deepEqual(game.metadata, {
      Site: 'Oslo NOR',
      Round: '3.1',
      TimeControl: '40/7200:3600',
      Source: 'chessport fixture',
    });
    assert.match(String(game.updatedAt), ISO_MS);
    const pgn = String(game.pgn);
    assert.ok(
      pgn.startsWith(
        '[Event "Test Championship"]\n[Site "Oslo NOR"]\n[Date "2024.03.15"]\n[Round "3.1"]\n' +
          '[White "Carlsen, Magnus"]\n[Black "Nepomniachtchi, Ian"]\n[Result "1-0"]\n[BlackElo "2795"]\n',
      ),
      pgn,
    );
    assert.match(pgn, /\[Source "chessport fixture"\]/);
    assert.match(pgn, /4\. O-O \{castles\} 4\.\.\. Nf6 \(4\.\.\. d6 5\. d4\) 5\. Re1\s\$1 1-0\n$/);
  });

  test('a game from a set-up position keeps its start in metadata.FEN and SetUp', async () => {
    const [, id] = await firstIds();
    const game = (await get<{ data: Json }>(`/games/${id}`)).json.data;
    assert.equal(game.moves, 'e2e4 e8d7 e4e5');
    assert.equal(game.fen, '8/3k4/8/4P3/8/8/8/4K3 b - - 0 2');
    // Its Site and Round are "?" (unknown): metadata leaves them out.
    assert.deepEqual(game.metadata, { SetUp: '1', FEN: '4k3/8/8/8/8/8/4P3/4K3 w - - 0 1' });
  });

  test('fen names an en passant square only where an en passant capture is legal', async () => {
    const file = join(world.env.dir, 'en-passant.pgn');
    const game = (movetext: string, event: string) =>
      `[Event "${event}"]\n[White "A"]\n[Black "B"]\n[Result "*"]\n\n${movetext} *\n`;
    writeFileSync(file, [game('1. e4', 'No capture'), game('1. e4 d5 2. e5 f5', 'Capture')].join('\n'));
    await importPgn(world.env, file, 'alice', 'En passant');
    const listed = (await get<{ data: GameSummary[] }>('/databases/en-passant/games')).json.data;
    const fens = [];
    for (const { id } of listed) fens.push((await get<{ data: Json }>(`/games/${id}`)).json.data.fen);
    assert.deepEqual(fens, [
      'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1',
      'rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3',
    ]);
    await cliJson(world.env, ['databases', 'delete', 'en-passant', '--user', 'alice']);
  });

  test('a game without moves has empty moves and the start position', async () => {
    const [, , id] = await firstIds();
    const game = (await get<{ data: Json }>(`/games/${id}`)).json.data;
    assert.equal(game.moves, '');
    assert.equal(game.fen, START_FEN);
    assert.equal(game.result, '*');
  });

  test('format=pgn and Accept: application/x-chess-pgn (or vnd.chess-pgn) give the PGN as a download', async () => {
    const [id] = await firstIds();
    const detail = (await get<{ data: { pgn: string; slug: string } }>(`/games/${id}`)).json.data;
    const answers = [
      await get(`/games/${id}?format=pgn`),
      await get(`/games/${id}`, world.tokens.alice, { accept: 'application/x-chess-pgn' }),
      await get(`/games/${id}`, world.tokens.alice, { accept: 'application/vnd.chess-pgn' }),
      await get(`/games/${id}`, world.tokens.alice, {
        accept: 'application/json;q=0.5, application/x-chess-pgn',
      }),
      // format=pgn decides whatever Accept says: HTTP libraries send Accept: application/json by default.
      await get(`/games/${id}?format=pgn`, world.tokens.alice, { accept: 'application/json' }),
    ];
    for (const res of answers) {
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), 'application/x-chess-pgn; charset=utf-8');
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="${detail.slug}.pgn"`);
      assert.equal(res.text, detail.pgn);
    }
    const json = await get(`/games/${id}`, world.tokens.alice, {
      accept: 'application/json, application/x-chess-pgn;q=0.1',
    });
    assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  });

  test('format other than pgn is 400; unknown parameters are 400', async () => {
    const [id] = await firstIds();
    for (const query of ['format=json', 'format=PGN', 'format=', 'limit=5']) {
      const res = await get(`/games/${id}?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal((res.json as Json).error, 'invalid_request');
    }
  });

  test('UUIDs are case-insensitive (RFC 9562): upper or mixed case gives the same game and database', async () => {
    const [id] = await firstIds();
    const game = await get<{ data: GameSummary }>(`/games/${id}`);
    assert.equal(game.status, 200);
    const mixed = (id as string).replace(/[a-f]/g, (c, i: number) => (i % 2 ? c.toUpperCase() : c));
    for (const variant of [(id as string).toUpperCase(), mixed]) {
      const res = await get(`/games/${variant}`);
      assert.equal(res.status, 200, variant);
      assert.equal(res.text, game.text, 'the same answer, id in lower case');
      assert.equal(res.headers.get('etag'), game.headers.get('etag'));
      const pgn = await get(`/games/${variant}?format=pgn`);
      assert.equal(pgn.text, (await get(`/games/${id}?format=pgn`)).text);
    }
    const { id: dbId, slug } = world.alice.main;
    const upper = dbId.toUpperCase();
    assert.equal((await get(`/databases/${upper}/games`)).text, (await get(`/databases/${dbId}/games`)).text);
    const pgn = await get(`/databases/${upper}/games?format=pgn`);
    assert.equal(pgn.status, 200);
    assert.equal(pgn.text, (await get(`/databases/${slug}/games?format=pgn`)).text);
    // Still nobody else's: Bob's game and database in upper case are the same 404 as in lower case.
    assert.equal((await get(`/games/${world.bob.gameIds[0]?.toUpperCase()}`)).status, 404);
    assert.equal((await get(`/databases/${world.bob.db.id.toUpperCase()}/games`)).status, 404);
    assert.equal((await get(`/games/${(id as string).toUpperCase()}`, '')).status, 401);
  });

  test("another user's game, an unknown UUID, a malformed id and a slug are all 404 not_found", async () => {
    const [aliceGame] = await firstIds();
    const aliceSlug = (await get<{ data: GameSummary[] }>('/games')).json.data[0]?.slug;
    const cases = [
      [world.tokens.alice, world.bob.gameIds[0]],
      [world.tokens.alice, `${world.bob.gameIds[0]}?format=pgn`],
      [world.tokens.bob, aliceGame],
      [world.tokens.alice, '00000000-0000-4000-8000-000000000000'],
      [world.tokens.alice, 'not-a-uuid'],
      [world.tokens.alice, "1' OR '1'='1"],
      [world.tokens.alice, aliceSlug],
      [world.tokens.alice, 'x'.repeat(300)],
      // A database's id is no game's.
      [world.tokens.alice, world.alice.main.id],
    ];
    const bodies = new Set<string>();
    for (const [token, id] of cases) {
      const res = await get(`/games/${encodeURI(String(id)).replace(/'/g, '%27')}`, token);
      assert.equal(res.status, 404, String(id));
      bodies.add(res.text);
    }
    assert.equal(bodies.size, 1, 'one answer for every case: nothing tells them apart');
  });

  test("another user's database by UUID or slug, an unknown or malformed one: 404 not_found", async () => {
    const aliceOnlySlug = world.alice.classics.slug;
    const [aliceGame] = await firstIds();
    const bodies = new Set<string>();
    // A game's id is no database's.
    for (const ref of [
      world.bob.db.id,
      'no-such-db',
      '00000000-0000-4000-8000-000000000000',
      '%00',
      aliceGame,
    ]) {
      for (const query of ['', '?format=pgn']) {
        const res = await get(`/databases/${ref}/games${query}`);
        assert.equal(res.status, 404, `${ref}${query}`);
        assert.equal((res.json as Json).error, 'not_found');
        bodies.add(res.text);
      }
    }
    assert.equal(bodies.size, 1, 'one answer for every case: nothing tells them apart');
    // Bob has no "classics" database: Alice's slug must not resolve for him.
    const res = await get(`/databases/${aliceOnlySlug}/games?format=pgn`, world.tokens.bob);
    assert.equal(res.status, 404);
  });
});

describe('empty lists and page sizes', () => {
  test('a user with nothing: empty data arrays, no Link; an empty database likewise', async () => {
    await cliJson(world.env, ['users', 'add', 'erin']);
    const token = await issueToken(world.env, 'erin', 'app-one', 'databases.read,games.read');
    for (const path of ['/databases', '/games', '/games?limit=1']) {
      const res = await get(path, token);
      assert.equal(res.status, 200, path);
      assert.equal(res.text, '{"data":[]}', path);
      assert.equal(res.headers.get('link'), null, path);
    }
    // Past the end of an empty list: still 200 and empty, with the way back.
    const beyond = await get('/games?offset=10', token);
    assert.equal(beyond.text, '{"data":[]}');
    assert.equal(beyond.headers.get('link'), '</api/v1/games?offset=0&limit=50>; rel="prev"');
    const empty = await cliJson<{ id: string; slug: string }>(world.env, [
      'databases',
      'add',
      'Nothing Yet',
      '--user',
      'erin',
    ]);
    for (const ref of [empty.id, empty.slug]) {
      const res = await get(`/databases/${ref}/games`, token);
      assert.equal(res.status, 200, ref);
      assert.equal(res.text, '{"data":[]}', ref);
      assert.equal(res.headers.get('link'), null, ref);
    }
    const databases = await get<{ data: Json[] }>('/databases', token);
    assert.deepEqual(
      databases.json.data.map((d) => d.id),
      [empty.id],
    );
  });

  test('limit: 50 games by default, up to 200, on both lists; Link while more exist', async () => {
    await cliJson(world.env, ['users', 'add', 'dave']);
    const file = writePgn(world.env.dir, 'dave.pgn', numberedGames('Dave', 201));
    const db = await importPgn(world.env, file, 'dave', 'Many');
    const token = await issueToken(world.env, 'dave', 'app-one', 'games.read');
    for (const path of ['/games', `/databases/${db.slug}/games`]) {
      const page = (query: string) => get<{ data: GameSummary[] }>(`${path}${query}`, token);
      const link = (query: string, rel: string) => `</api/v1${path}?${query}>; rel="${rel}"`;
      const first = await page('');
      assert.equal(first.json.data.length, 50, path);
      assert.equal(
        first.headers.get('link'),
        `${link('limit=50&offset=50', 'next')}, ${link('limit=50&offset=200', 'last')}`,
        path,
      );
      const max = await page('?limit=200');
      assert.equal(max.json.data.length, 200, path);
      assert.equal(
        max.headers.get('link'),
        `${link('limit=200&offset=200', 'next')}, ${link('limit=200&offset=200', 'last')}`,
        path,
      );
      assert.deepEqual(
        max.json.data.slice(0, 50).map((g) => g.id),
        first.json.data.map((g) => g.id),
      );
      const last = await page('?limit=200&offset=200');
      assert.deepEqual(
        last.json.data.map((g) => g.white.name),
        ['Dave White 201'],
      );
      assert.equal(last.headers.get('link'), link('limit=200&offset=0', 'prev'), path);
      // Exactly the last game: a full page and nothing after it.
      const exact = await page('?limit=1&offset=200');
      assert.equal(exact.json.data.length, 1);
      assert.equal(exact.headers.get('link'), link('limit=1&offset=199', 'prev'), path);
      assert.equal((await page('?limit=201')).status, 400, path);
    }
  });
});

describe('games with missing or odd tags', () => {
  // Every field is present everywhere, an unknown value is null (docs/design.md 1-5), and a player reads the same
  // in the list, a database's list, the detail and the feed. Carol has these games only.
  const players = [
    [
      { name: 'Plain, White', elo: null, fideId: null, country: null },
      { name: 'Plain, Black', elo: null, fideId: null, country: null },
    ],
    [
      // Elo "0" and "-" are no rating, an empty or non-digit FideId no id; a Fed that is no 3-letter code
      // gives way to a Country that is one, upper-cased.
      { name: 'Zero, Elo', elo: null, fideId: null, country: 'GER' },
      { name: 'Dash, Elo', elo: null, fideId: null, country: null },
    ],
    [
      { name: null, elo: null, fideId: null, country: null },
      { name: 'Spaced, Ids', elo: 2100, fideId: '4168119', country: 'RUS' },
    ],
    [
      // FIDE ids start at 1: "0" (some exporters' placeholder) is no id, or clients would match every such
      // player as one person.
      { name: 'Zero, Id', elo: null, fideId: null, country: null },
      { name: 'Zeros, Id', elo: null, fideId: null, country: null },
    ],
  ];
  const fields = [
    { event: 'No date, no ratings, no ids', date: null, eco: null, result: '1-0' },
    // A partial date is null (the PGN keeps it); a lower-case ECO is upper-cased.
    { event: 'Partial date and placeholders', date: null, eco: 'C88', result: '0-1' },
    // An empty Event, an impossible date (2021 is no leap year) and an ECO outside A00..E99 are null.
    { event: null, date: null, eco: null, result: '1/2-1/2' },
    { event: 'Zero ids', date: null, eco: null, result: '*' },
  ];

  test('every field present, null when unknown, alike in lists, detail and feed', async () => {
    await cliJson(world.env, ['users', 'add', 'carol']);
    const db = await importPgn(world.env, join(FIXTURES, 'api/odd-tags.pgn'), 'carol', 'Odd');
    const token = await issueToken(world.env, 'carol', 'app-one', 'games.read');
    const list = (await get<{ data: GameSummary[] }>('/games', token)).json.data;
    const inDatabase = (await get<{ data: GameSummary[] }>(`/databases/${db.slug}/games`, token)).json.data;
    const feed = (await get<{ data: Json[] }>('/changes', token)).json.data;
    assert.equal(list.length, 4);
    assert.deepEqual(inDatabase, list);
    // The slug has the year of a partial date too, and none without a date; an impossible date keeps its year.
    assert.deepEqual(
      list.map((g) => g.slug.replace(/-[0-9a-f]{12}$/, '')),
      [
        'plain-white-vs-plain-black',
        'zero-elo-vs-dash-elo-2012',
        'unknown-vs-spaced-ids-2021',
        'zero-id-vs-zeros-id',
      ],
    );
    for (const [i, game] of list.entries()) {
      const expected = { ...fields[i], white: players[i]?.[0], black: players[i]?.[1] };
      assert.deepEqual(Object.keys(game).sort(), SUMMARY_KEYS);
      assert.deepEqual(
        { ...game, id: 0, slug: 0, databaseId: 0 },
        { ...expected, id: 0, slug: 0, databaseId: 0 },
      );
      const detail = (await get<{ data: Json }>(`/games/${game.id}`, token)).json.data;
      assert.deepEqual(Object.keys(detail).sort(), DETAIL_KEYS);
      for (const [key, value] of Object.entries(game)) assert.deepEqual(detail[key], value, `detail ${key}`);
      const change = feed.find((c) => c.id === game.id);
      assert.deepEqual(
        { white: change?.white, black: change?.black, result: change?.result },
        { white: game.white, black: game.black, result: game.result },
      );
      for (const player of [game.white, game.black, detail.white as Json, change?.white as Json]) {
        assert.deepEqual(Object.keys(player).sort(), PLAYER_KEYS);
      }
    }
  });
});

describe('field order', () => {
  // JSON objects are unordered, but clients compare and hash bodies, and ETags are of the bytes: the fields come
  // in the order of the spec's tables (the detail has the list item's fields first, in their order).
  test("every object's fields come in the spec's order", async () => {
    const summary = ['id', 'slug', 'databaseId', 'event', 'date', 'result', 'eco', 'white', 'black'];
    const player = ['name', 'elo', 'fideId', 'country'];
    const me = await get<{ data: Json }>('/me');
    assert.deepEqual(Object.keys(me.json.data), ['id', 'name', 'email', 'image']);
    const databases = await get<{ data: Json[] }>('/databases');
    assert.deepEqual(Object.keys(databases.json.data[0] ?? {}), [
      'id',
      'name',
      'slug',
      'private',
      'maxGames',
      'gameCount',
      'createdAt',
      'updatedAt',
    ]);
    const list = await get<{ data: GameSummary[] }>('/games?limit=1');
    const [item] = list.json.data;
    assert.deepEqual(Object.keys(item ?? {}), summary);
    assert.deepEqual(Object.keys(item?.white ?? {}), player);
    const inDatabase = await get<{ data: Json[] }>(`/databases/${world.alice.main.slug}/games?limit=1`);
    assert.deepEqual(Object.keys(inDatabase.json.data[0] ?? {}), summary);
    const detail = await get<{ data: Json }>(`/games/${item?.id}`);
    assert.deepEqual(Object.keys(detail.json.data), [
      ...summary,
      'fen',
      'moves',
      'pgn',
      'metadata',
      'updatedAt',
    ]);
    assert.deepEqual(Object.keys(detail.json.data.black as Json), player);
    const feed = await get<{ data: Json[] }>('/changes?limit=1');
    assert.deepEqual(Object.keys(feed.json), ['data', 'nextCursor', 'hasMore']);
    assert.deepEqual(Object.keys(feed.json.data[0] ?? {}), [
      'id',
      'databaseId',
      'updatedAt',
      'deleted',
      'white',
      'black',
      'result',
    ]);
    assert.deepEqual(Object.keys(feed.json.data[0]?.white as Json), player);
    const error = await get('/games?limit=0');
    assert.deepEqual(Object.keys(error.json), ['error', 'error_description']);
  });
});

describe('ids of any length or encoding', () => {
  // The router used to refuse these before any route: 400 with the path in the message, even without a token.
  const long = (n: number) => 'a'.repeat(n);
  const odd = [long(2048), long(2049), long(10_000), '%ZZ', '%', '%E0%A4%A', 'x%C0%AFy', `${long(3000)}%ZZ`];
  const shapes = (id: string) => [
    `/games/${id}`,
    `/games/${id}?format=pgn`,
    `/databases/${id}/games`,
    `/databases/${id}/games?format=pgn`,
  ];

  test('a path with such an id is 401 without a valid token, the usual 404 not_found with one', async () => {
    const usual = {
      game: (await get('/games/00000000-0000-4000-8000-000000000000')).text,
      database: (await get('/databases/no-such-db/games')).text,
    };
    for (const id of odd) {
      for (const path of shapes(id)) {
        const what = path.slice(0, 60);
        const anonymous = await get(path, '');
        assert.equal(anonymous.status, 401, what);
        assert.equal(
          anonymous.headers.get('www-authenticate'),
          `Bearer realm="chessport", resource_metadata="${world.base.replace(/\/api\/v1$/, '')}/.well-known/oauth-protected-resource"`,
          what,
        );
        const garbage = await get(path, 'cp_not-a-real-token');
        assert.equal(garbage.status, 401, what);
        const res = await get(path);
        assert.equal(res.status, 404, what);
        assert.equal(res.text, path.startsWith('/games/') ? usual.game : usual.database, what);
      }
    }
  });

  test('unknown paths with such a segment are 404 not_found, with or without a token', async () => {
    for (const id of odd) {
      for (const path of [
        `/databases/${id}`,
        `/nope/${id}`,
        `/games/${id}/x`,
        `/${id}`,
        `/databases/${id}/x`,
      ]) {
        for (const token of ['', world.tokens.alice]) {
          const res = await get(path, token);
          assert.equal(res.status, 404, path.slice(0, 60));
          assert.deepEqual(res.json, { error: 'not_found', error_description: 'There is no such resource.' });
        }
      }
    }
  });
});

describe('database PGN export', () => {
  test('format=pgn returns every game of the database as one PGN file, in import order', async () => {
    const res = await get(`/databases/${world.alice.main.slug}/games?format=pgn`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/x-chess-pgn; charset=utf-8');
    assert.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="${world.alice.main.slug}.pgn"`,
    );
    const games = (await get<{ data: GameSummary[] }>(`/databases/${world.alice.main.id}/games`)).json.data;
    const pgns = [];
    for (const g of games) pgns.push((await get<{ data: { pgn: string } }>(`/games/${g.id}`)).json.data.pgn);
    assert.equal(res.text, pgns.join('\n'));
    assert.equal(res.text.match(/^\[Event /gm)?.length, 3);
    assert.match(res.text, /\[Source "chessport fixture"\]/, 'extra tags are exported');
    const negotiated: [string, string][] = [
      ['', 'application/x-chess-pgn'],
      ['', 'application/vnd.chess-pgn'],
      ['?format=pgn', 'application/json'],
    ];
    for (const [query, accept] of negotiated) {
      const other = await get(`/databases/${world.alice.main.id}/games${query}`, world.tokens.alice, {
        accept,
      });
      assert.equal(other.status, 200, `${query} ${accept}`);
      assert.equal(other.headers.get('content-type'), 'application/x-chess-pgn; charset=utf-8');
      assert.equal(other.text, res.text, `${query} ${accept}`);
    }
  });

  test('limit or offset with the PGN export is 400 (the export is always whole); format=xml is 400', async () => {
    for (const query of ['format=pgn&limit=1', 'format=pgn&offset=0', 'format=xml']) {
      const res = await get(`/databases/${world.alice.main.slug}/games?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal((res.json as Json).error, 'invalid_request');
    }
  });

  test('an empty database exports an empty file', async () => {
    await cliJson(world.env, ['databases', 'add', 'Empty', '--user', 'alice']);
    const res = await get('/databases/empty/games?format=pgn');
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
  });
});

describe('tokens at rest', () => {
  test('the store holds no token in plain text', async () => {
    const bytes = await storeText(world.env.databaseUrl);
    for (const token of Object.values(world.tokens)) assert.ok(!bytes.includes(token));
  });
});

// The filters of GET /games and GET /databases/{id}/games, and games by id (GET /games?ids=), black-box
// over a real corpus slice: for random filter combinations every page, total, rel="last" and export equals
// the filter the test applies itself to the user's whole list; strict values; ids= gives the user's games in
// the order given, and another user's ids exactly as unknown ones, in every encoding. The server counts at
// most CAP matches (FILTER_TOTAL_MAX), so that broad filters over the slice say X-Total-Count-Exceeds
// instead of a total, as filters of more than 1,000 games do by default.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CORPUS, CORPUS_PRESENT, NO_CORPUS } from '../helpers/corpus.ts';
import { cliJson, type Env, http, importPgn, issueToken, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';

type Player = { name: string | null; fideId: string | null };
interface Game {
  id: string;
  databaseId: string;
  event: string | null;
  date: string | null;
  result: string;
  eco: string | null;
  white: Player;
  black: Player;
  updatedAt: string;
  pgn: string;
}

let env: Env;
let server: InProcessServer;
let base: string;
let alice: string;
let bob: string;
let all: Game[] = [];
let bobIds: string[] = [];
let databases: { id: string; slug: string }[] = [];
/** The most matches the server counts (FILTER_TOTAL_MAX) in this suite: fewer than the broad filters have. */
const CAP = 150;
/** The suite's servers: the bound, and a rate limit that its thousands of requests never reach. */
const SERVER_ENV = { FILTER_TOTAL_MAX: String(CAP), RATE_LIMIT_MAX: '100000' };

const get = <T = Record<string, unknown>>(
  path: string,
  token = alice,
  headers: Record<string, string> = {},
) => http<T>(base, path, { token, headers });

async function ndjson(path: string, token = alice): Promise<Game[]> {
  const answer = await get(path, token);
  assert.equal(answer.status, 200, path);
  return answer.text === ''
    ? []
    : answer.text
        .slice(0, -1)
        .split('\n')
        .map((line) => JSON.parse(line) as Game);
}

describe('filters and ids over a corpus slice', { skip: CORPUS_PRESENT ? false : NO_CORPUS }, () => {
  before(async () => {
    env = tempEnv();
    await cliJson(env, ['users', 'add', 'alice']);
    await cliJson(env, ['users', 'add', 'bob']);
    await cliJson(env, ['apps', 'add', 'app-one']);
    databases = [
      await importPgn(env, join(CORPUS, 'awkward/lichess-org_scalachess__FWWRC.pgn'), 'alice', 'Rapid'),
      await importPgn(env, join(CORPUS, 'annotated/pychess__dortmund.pgn'), 'alice', 'Dortmund'),
    ];
    await importPgn(env, join(CORPUS, 'annotated/pychess__dortmund.pgn'), 'bob', 'Dortmund');
    alice = await issueToken(env, 'alice', 'app-one', 'games.read');
    bob = await issueToken(env, 'bob', 'app-one', 'games.read');
    server = await serveInProcess(env, SERVER_ENV);
    base = `${server.base}/api/v1`;
    // A few deleted games: tombstones, which the filter indexes hold and a filter's count takes off.
    const before = await ndjson('/games?format=ndjson');
    for (const game of before.filter((_, i) => i % 97 === 3).slice(0, 8)) {
      await cliJson(env, ['games', 'delete', game.id]);
    }
    all = await ndjson('/games?format=ndjson');
    assert.equal(all.length, before.length - 8);
    bobIds = (await ndjson('/games?format=ndjson', bob)).map((game) => game.id);
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  /** A small deterministic generator (mulberry32): the same combinations every run. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /** The filter as docs/api.md "Filters" defines it, applied by the test. */
  function matches(game: Game, filter: Record<string, string>): boolean {
    const { dateFrom, dateTo, updatedSince, player, fideId, color, result, eco, event } = filter;
    if (dateFrom !== undefined && (game.date === null || game.date < dateFrom)) return false;
    if (dateTo !== undefined && (game.date === null || game.date > dateTo)) return false;
    if (updatedSince !== undefined && Date.parse(game.updatedAt) < Date.parse(updatedSince)) return false;
    if (player !== undefined || fideId !== undefined) {
      const side = (p: Player) =>
        (player === undefined || p.name === player) && (fideId === undefined || p.fideId === fideId);
      const sides =
        color === 'white' ? [game.white] : color === 'black' ? [game.black] : [game.white, game.black];
      if (!sides.some(side)) return false;
    }
    if (result !== undefined && game.result !== result) return false;
    if (eco !== undefined && !(game.eco ?? '').startsWith(eco)) return false;
    if (event !== undefined && game.event !== event) return false;
    return true;
  }

  /** A random combination of one to three filters, with values taken from random games. */
  function someFilter(next: () => number): Record<string, string> {
    const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)] as T;
    const game = () => pick(all);
    const makers: Record<string, () => Record<string, string> | undefined> = {
      dateFrom: () => {
        const { date } = game();
        return date ? { dateFrom: date } : undefined;
      },
      dateTo: () => {
        const { date } = game();
        return date ? { dateTo: date } : undefined;
      },
      updatedSince: () => ({ updatedSince: game().updatedAt }),
      player: () => {
        const g = game();
        const p = next() < 0.5 ? g.white : g.black;
        if (!p.name) return undefined;
        const chosen: Record<string, string> = { player: p.name };
        if (next() < 0.5) chosen.color = next() < 0.5 ? 'white' : 'black';
        return chosen;
      },
      fideId: () => {
        const g = game();
        const p = next() < 0.5 ? g.white : g.black;
        return p.fideId ? { fideId: p.fideId } : undefined;
      },
      result: () => ({ result: pick(['1-0', '0-1', '1/2-1/2', '*']) }),
      eco: () => {
        const eco = game().eco;
        return eco ? { eco: eco.slice(0, 1 + Math.floor(next() * 3)) } : undefined;
      },
      event: () => {
        const { event } = game();
        return event ? { event } : undefined;
      },
    };
    const names = Object.keys(makers);
    const filter: Record<string, string> = {};
    const count = 1 + Math.floor(next() * 3);
    for (let i = 0; i < count; i++) Object.assign(filter, makers[pick(names)]?.() ?? {});
    return Object.keys(filter).length > 0 ? filter : { result: '1-0' };
  }

  test('random combinations: every page, total, rel="last" and export equals the filter applied here', async () => {
    assert.ok(all.length > 900, `${all.length} games`);
    const next = random(36);
    for (let round = 0; round < 30; round++) {
      const filter = someFilter(next);
      const inDatabase = next() < 0.3 ? databases[round % 2] : undefined;
      const path = inDatabase ? `/databases/${inDatabase.slug}/games` : '/games';
      const expected = all
        .filter((game) => matches(game, filter) && (!inDatabase || game.databaseId === inDatabase.id))
        .map((game) => game.id);
      const query = new URLSearchParams(filter).toString();
      const what = `${path}?${query}`;
      const limit = 1 + Math.floor(next() * 60);
      const seen: string[] = [];
      const counted = expected.length <= CAP;
      for (let offset = 0; ; offset += limit) {
        const page = await get<{ data: { id: string }[] }>(
          `${path}?${query}&limit=${limit}&offset=${offset}`,
        );
        assert.equal(page.status, 200, what);
        // Counted up to CAP; more matches say only that they exceed it, on every page alike.
        assert.equal(page.headers.get('x-total-count'), counted ? String(expected.length) : null, what);
        assert.equal(page.headers.get('x-total-count-exceeds'), counted ? null : String(CAP), what);
        seen.push(...page.json.data.map((game) => game.id));
        const link = page.headers.get('link') ?? '';
        if (!link.includes('rel="next"')) break;
        const last = /offset=(\d+)>; rel="last"/.exec(link)?.[1];
        if (!counted) assert.equal(last, undefined, `${what}: no rel="last" without a total`);
        if (last !== undefined) assert.equal(Number(last), Math.floor((expected.length - 1) / limit) * limit);
      }
      assert.deepEqual(seen, expected, what);
      const exported = await ndjson(`${path}?${query}&format=ndjson`);
      assert.deepEqual(
        exported.map((game) => game.id),
        expected,
        `${what} as NDJSON`,
      );
      const pgn = await get(`${path}?${query}&format=pgn`);
      assert.equal(pgn.text, exported.map((game) => game.pgn).join('\n'), `${what} as PGN`);
    }
  });

  test('the bound: X-Total-Count up to FILTER_TOTAL_MAX matches, X-Total-Count-Exceeds beyond, on every page, HEAD and 304', async () => {
    // The most common result: a broad filter, with more matches than CAP.
    const byResult = new Map<string, number>();
    for (const game of all) byResult.set(game.result, (byResult.get(game.result) ?? 0) + 1);
    const [result, n] = [...byResult].sort((a, b) => b[1] - a[1])[0] as [string, number];
    assert.ok(n > CAP, `${n} games of ${result}`);
    const query = `result=${encodeURIComponent(result)}`;
    const limit = 40;
    const lastPage = Math.floor((n - 1) / limit) * limit;
    /** Every page of the filtered list, on a server that counts at most `max` matches. */
    async function pages(at: string, max: number): Promise<void> {
      const counted = max === 0 || n <= max;
      const ids: string[] = [];
      for (let offset = 0; offset <= lastPage; offset += limit) {
        const path = `/games?${query}&limit=${limit}&offset=${offset}`;
        const what = `FILTER_TOTAL_MAX=${max} ${path}`;
        const page = await http<{ data: { id: string }[] }>(at, path, { token: alice });
        assert.equal(page.status, 200, what);
        ids.push(...page.json.data.map((game) => game.id));
        assert.equal(page.headers.get('x-total-count'), counted ? String(n) : null, what);
        assert.equal(page.headers.get('x-total-count-exceeds'), counted ? null : String(max), what);
        const link = page.headers.get('link') ?? '';
        assert.equal(link.includes('rel="next"'), offset < lastPage, what);
        assert.equal(link.includes('rel="last"'), counted && offset < lastPage, what);
        // HEAD and a 304 say the same as the 200.
        const head = await http(at, path, { token: alice, method: 'HEAD' });
        const etag = page.headers.get('etag') as string;
        const again = await http(at, path, { token: alice, headers: { 'if-none-match': etag } });
        for (const other of [head, again]) {
          for (const name of ['x-total-count', 'x-total-count-exceeds', 'link', 'etag']) {
            assert.equal(other.headers.get(name), page.headers.get(name), `${what}: ${name}`);
          }
        }
        assert.equal(again.status, 304, what);
      }
      assert.deepEqual(
        ids,
        all.filter((game) => game.result === result).map((game) => game.id),
      );
      // The unfiltered list keeps its exact total, whatever the bound.
      const unfiltered = await http(at, '/games?limit=1', { token: alice });
      assert.equal(unfiltered.headers.get('x-total-count'), String(all.length));
      assert.equal(unfiltered.headers.get('x-total-count-exceeds'), null);
    }
    await pages(base, CAP);
    // Exactly n matches counted at a bound of n; one more than the bound n - 1 (without the page cache,
    // the other way a page is made); 0 counts every match.
    for (const [max, extra] of [
      [n, {}],
      [n - 1, { PAGE_CACHE_MB: '0' }],
      [0, {}],
    ] as const) {
      const other = await serveInProcess(env, { ...SERVER_ENV, FILTER_TOTAL_MAX: String(max), ...extra });
      try {
        await pages(`${other.base}/api/v1`, max);
      } finally {
        await other.stop();
      }
    }
  });

  test('strict values: malformed filters are 400 naming the parameter', async () => {
    for (const query of [
      'dateFrom=2024-02-30',
      'dateFrom=2024-1-01',
      'dateTo=2024.01.01',
      'updatedSince=2024-01-01',
      'color=white',
      'player=x&color=red',
      'eco=b9',
      'eco=F1',
      'eco=B901',
      'result=2-0',
      'fideId=abc',
      'player=',
      'event=',
      'player=a&player=b',
      'opponent=x',
    ]) {
      for (const path of ['/games', `/databases/${databases[0]?.slug}/games`]) {
        const answer = await get<{ error: string; error_description: string }>(`${path}?${query}`);
        assert.equal(answer.status, 400, `${path}?${query}`);
        assert.equal(answer.json.error, 'invalid_request');
        const name = query.includes('color') ? 'color' : (query.split('=')[0] as string);
        assert.match(answer.json.error_description, new RegExp(name), `${path}?${query}`);
      }
    }
  });

  test('ids=: the user’s games, as details, in the order given; another user’s exactly as unknown ones', async () => {
    const [a, b, c] = [all[5], all[700], all[42]] as [Game, Game, Game];
    const unknown = '01900000-0000-7000-8000-000000000000';
    const foreign = bobIds[3] as string;
    const answer = await get<{ data: Game[] }>(
      `/games?ids=${a.id},${foreign},${b.id.toUpperCase()},${unknown},${c.id},${a.id}`,
    );
    assert.equal(answer.status, 200);
    assert.deepEqual(
      answer.json.data.map((game) => game.id),
      [a.id, b.id, c.id],
    );
    for (const game of answer.json.data) assert.deepEqual(game, (await get(`/games/${game.id}`)).json.data);
    assert.equal(answer.headers.get('x-total-count'), null);
    // One PGN file of the same games.
    const pgn = await get(`/games?ids=${a.id},${foreign},${b.id},${c.id}&format=pgn`);
    assert.equal(pgn.text, [a.pgn, b.pgn, c.pgn].join('\n'));
    // Another user's ids, alone or among others, in every encoding, answer as unknown ones do.
    for (const encode of [
      (id: string) => id,
      (id: string) => id.toUpperCase(),
      (id: string) => encodeURIComponent(id).replace(/-/g, '%2D'),
    ]) {
      for (const [mine, other] of [
        [foreign, unknown],
        [`${foreign},${a.id}`, `${unknown},${a.id}`],
      ] as const) {
        const theirs = await get(`/games?ids=${encode(mine)}`);
        const nobodys = await get(`/games?ids=${encode(other)}`);
        assert.equal(theirs.status, 200);
        assert.equal(theirs.text, nobodys.text);
        assert.equal(theirs.headers.get('etag'), nobodys.headers.get('etag'));
        const theirPgn = await get(`/games?ids=${encode(mine)}&format=pgn`);
        assert.equal(theirPgn.text, (await get(`/games?ids=${encode(other)}&format=pgn`)).text);
      }
    }
    // The same request with bob's token finds his game: the id exists, it is just not alice's.
    assert.equal((await get<{ data: Game[] }>(`/games?ids=${foreign}`, bob)).json.data.length, 1);
  });

  test('ids=: 1 to 200 UUIDs, not with paging, filters or NDJSON', async () => {
    const some = all.slice(0, 201).map((game) => game.id);
    const ok = await get<{ data: Game[] }>(`/games?ids=${some.slice(0, 200).join(',')}`);
    assert.equal(ok.status, 200);
    assert.equal(ok.json.data.length, 200);
    for (const query of [
      'ids=',
      'ids=nope',
      `ids=${some[0]},`,
      `ids=${some[0]},,${some[1]}`,
      `ids=${some[0]}%20`,
      `ids=${some.join(',')}`,
      `ids=${some[0]}&limit=5`,
      `ids=${some[0]}&offset=0`,
      `ids=${some[0]}&result=1-0`,
      `ids=${some[0]}&format=ndjson`,
      `ids=${some[0]}&ids=${some[1]}`,
    ]) {
      const answer = await get<{ error: string }>(`/games?${query}`);
      assert.equal(answer.status, 400, query.slice(0, 80));
      assert.equal(answer.json.error, 'invalid_request');
    }
  });
});

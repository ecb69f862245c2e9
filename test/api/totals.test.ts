// The lists say their total, black-box: X-Total-Count on /games, /databases/{id}/games and /databases,
// rel="last" in the Link header of the paged lists, and each database's gameCount, all equal to what walking
// the lists finds, before and after every kind of write the CLI makes (the counts are kept by the writes).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { type Answer, cli, cliJson, http } from '../helpers/harness.ts';
import { bearer, header, raw } from '../helpers/production.ts';
import { makeWorld, type World } from '../helpers/world.ts';

type Json = Record<string, unknown>;
interface Listed {
  id: string;
  slug: string;
  gameCount: number;
}

let world: World;
before(async () => {
  world = await makeWorld();
});
after(async () => world?.stop());

const get = <T = Json>(path: string) => http<T>(world.base, path, { token: world.tokens.alice });

/** The targets of a Link header by relation. */
function links(answer: Answer): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (answer.headers.get('link') ?? '').split(', ').filter(Boolean)) {
    const [, target, rel] = /^<([^>]+)>; rel="([a-z]+)"$/.exec(part) ?? [];
    assert.ok(target && rel, part);
    found.set(rel, target);
  }
  return found;
}

/** Walks a list by rel="next" and checks every page's total and rel="last" against what the walk finds. */
async function walk(path: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  const totals = new Set<string>();
  const lasts = new Set<string>();
  let next: string | undefined = `${path}?limit=${limit}`;
  while (next) {
    const page: Answer<{ data: { id: string }[] }> = await get(next);
    assert.equal(page.status, 200, next);
    totals.add(page.headers.get('x-total-count') ?? 'missing');
    const rels = links(page);
    next = rels.get('next')?.replace('/api/v1', '');
    if (next) lasts.add(rels.get('last') ?? `no last link (${next})`);
    else assert.equal(rels.get('last'), undefined, 'the last page has no rel="last"');
    ids.push(...page.json.data.map((game) => game.id));
  }
  assert.deepEqual([...totals], [String(ids.length)], `${path}: X-Total-Count on every page is the count`);
  if (ids.length > limit) {
    // Every page names the same last page, and it holds the list's last games.
    assert.equal(lasts.size, 1, [...lasts].join(' '));
    const [target] = lasts;
    const last = await get<{ data: { id: string }[] }>(String(target).replace('/api/v1', ''));
    const rest = ids.length % limit || limit;
    assert.deepEqual(
      last.json.data.map((game) => game.id),
      ids.slice(-rest),
      'rel="last" holds the last games',
    );
    assert.equal(links(last).get('next'), undefined);
  }
  return ids;
}

/** /databases and every list against each other: totals, gameCount, the lists' contents. */
async function assertTotalsAgree(when: string): Promise<void> {
  const databases = await get<{ data: Listed[] }>('/databases');
  assert.equal(databases.headers.get('x-total-count'), String(databases.json.data.length), when);
  let sum = 0;
  for (const database of databases.json.data) {
    for (const limit of [2, 3]) {
      const ids = await walk(`/databases/${database.id}/games`, limit);
      assert.equal(database.gameCount, ids.length, `${when}: gameCount of ${database.slug}`);
    }
    sum += database.gameCount;
  }
  for (const limit of [1, 4, 200]) {
    const all = await walk('/games', limit);
    assert.equal(all.length, sum, `${when}: /games holds the databases' games`);
  }
}

describe('totals', () => {
  test('X-Total-Count, rel="last" and gameCount agree with the lists', async () => {
    await assertTotalsAgree('at the start');
    const databases = await get<{ data: Listed[] }>('/databases');
    assert.deepEqual(
      databases.json.data.map((d) => d.gameCount),
      [3, 4],
    );
  });

  test('and after every kind of write, each made by the CLI in its own process', async () => {
    const games = (await get<{ data: { id: string }[] }>('/games?limit=200')).json.data.map((g) => g.id);
    const [a, b, c] = games as [string, string, string];
    const spare = await cliJson<{ slug: string }>(world.env, [
      'databases',
      'add',
      'Spare',
      '--user',
      'alice',
      '--max-games',
      '3',
    ]);
    await assertTotalsAgree('after databases add');
    const file = (name: string, n: number) => writePgn(world.env.dir, `${name}.pgn`, numberedGames(name, n));
    const writes: [string, string[]][] = [
      ['games update', ['games', 'update', a, file('Updated', 1)]],
      ['games move', ['games', 'move', b, '--database', spare.slug]],
      ['games move back and forth', ['games', 'move', b, '--database', world.alice.main.slug]],
      ['games move again', ['games', 'move', c, '--database', spare.slug]],
      ['games delete', ['games', 'delete', a]],
      ['an import', ['import', file('More', 5), '--user', 'alice', '--database', world.alice.main.slug]],
      // maxGames 3: one of the four is refused, and not counted.
      ['an import over maxGames', ['import', file('Full', 4), '--user', 'alice', '--database', spare.slug]],
      [
        'a duplicate import',
        ['import', file('More', 5), '--user', 'alice', '--database', world.alice.main.slug],
      ],
      ['databases delete', ['databases', 'delete', 'classics', '--user', 'alice']],
    ];
    for (const [what, args] of writes) {
      const result = await cli(world.env, args);
      assert.equal(result.code, 0, `${what}: ${result.stderr}`);
      await assertTotalsAgree(`after ${what}`);
    }
    const spareNow = (await get<{ data: Listed[] }>('/databases')).json.data.find(
      (d) => d.slug === spare.slug,
    );
    assert.equal(spareNow?.gameCount, 3, 'full at its maxGames');
  });

  test('HEAD and 304 carry the total; new games change it, the ETag and rel="last"', async () => {
    const alice = bearer(world.tokens.alice);
    const path = '/api/v1/games?limit=2';
    const first = await raw(world.server.base, path, { headers: alice });
    const total = Number(header(first, 'x-total-count'));
    assert.ok(total > 2);
    const head = await raw(world.server.base, path, { method: 'HEAD', headers: alice });
    assert.equal(header(head, 'x-total-count'), String(total));
    const again = await raw(world.server.base, path, {
      headers: { ...alice, 'if-none-match': header(first, 'etag') },
    });
    assert.equal(again.status, 304);
    assert.equal(header(again, 'x-total-count'), String(total));
    await cliJson(world.env, [
      'import',
      writePgn(world.env.dir, 'two-more.pgn', numberedGames('Two more', 2)),
      '--user',
      'alice',
      '--database',
      world.alice.main.slug,
    ]);
    const after = await raw(world.server.base, path, {
      headers: { ...alice, 'if-none-match': header(first, 'etag') },
    });
    assert.equal(after.status, 200, 'the first page is the same games, but the list is longer');
    assert.equal(header(after, 'x-total-count'), String(total + 2));
    assert.notEqual(header(after, 'link'), header(first, 'link'));
  });

  test('an empty list: total 0, no links; another user sees only their own', async () => {
    await cliJson(world.env, ['databases', 'add', 'Empty', '--user', 'alice']);
    const empty = await get<{ data: unknown[] }>('/databases/empty/games');
    assert.equal(empty.headers.get('x-total-count'), '0');
    assert.equal(empty.headers.get('link'), null);
    const bob = await http<{ data: Listed[] }>(world.base, '/databases', { token: world.tokens.bob });
    assert.equal(bob.headers.get('x-total-count'), '1');
    assert.deepEqual(
      bob.json.data.map((d) => d.gameCount),
      [4],
    );
    const bobGames = await http(world.base, '/games', { token: world.tokens.bob });
    assert.equal(bobGames.headers.get('x-total-count'), '4');
  });
});

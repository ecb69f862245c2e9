// Database names may repeat (slugs do not: archive, archive-2). A command that names a database by a name
// that several share changes none of them and lists them; the slug or id picks one.
// The commands run in the test's process (run: cliInProcess), but for cliBothWays, which checks that the
// real binary prints what the in-process run prints, for a listing and a refusal.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { queryStore } from '../helpers/stores.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

type Listed = { id: string; slug: string; name: string; games: number };

let env: Env;
let first: Listed;
let second: Listed;
let gameId: string;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'gina']);
  first = await cliJson<Listed>(env, ['databases', 'add', 'Archive', '--user', 'gina']);
  second = await cliJson<Listed>(env, ['databases', 'add', 'Archive', '--user', 'gina']);
  await cliJson(env, ['import', CLASSICS_PGN, '--user', 'gina', '--database', 'Inbox']);
  const [row] = await queryStore<{ id: string }>(env.databaseUrl, 'select id from games order by pk limit 1');
  gameId = row?.id ?? '';
});
after(() => env?.cleanup());

const list = () => cliJson<Listed[]>(env, ['databases', 'list', '--user', 'gina']);

async function refusedAsAmbiguous(args: string[], both = false): Promise<void> {
  const before = await list();
  const result = await (both ? cliBothWays : run)(env, args);
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /^chessport: 2 databases of [^\n]+ are named "Archive": [^\n]+; give its slug or id\n$/,
  );
  for (const db of [first, second]) assert.ok(result.stderr.includes(`${db.slug} (${db.id})`), result.stderr);
  assert.deepEqual(await list(), before, 'nothing changed');
}

test('the two databases have one name and two slugs, in the list the real binary prints too', async () => {
  assert.deepEqual([first.slug, second.slug], ['archive', 'archive-2']);
  const listed = await cliBothWays(env, ['databases', 'list', '--user', 'gina']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /archive-2/);
});

test('delete, import and games move refuse a name that two databases share', async () => {
  await refusedAsAmbiguous(['databases', 'delete', 'Archive', '--user', 'gina'], true);
  await refusedAsAmbiguous(['import', CLASSICS_PGN, '--user', 'gina', '--database', 'Archive']);
  await refusedAsAmbiguous(['games', 'move', gameId, '--database', 'Archive']);
});

test('a slug or an id names one of them', async () => {
  const moved = await cliJson<{ databaseId: string }>(env, [
    'games',
    'move',
    gameId,
    '--database',
    'archive-2',
  ]);
  assert.equal(moved.databaseId, second.id);
  const imported = await cliJson<{ database: { id: string } }>(env, [
    'import',
    CLASSICS_PGN,
    '--user',
    'gina',
    '--database',
    first.id,
  ]);
  assert.equal(imported.database.id, first.id);
  const deleted = await cliJson<{ id: string }>(env, ['databases', 'delete', 'archive-2', '--user', 'gina']);
  assert.equal(deleted.id, second.id);
  // One "Archive" is left: its name is enough again.
  const again = await cliJson<{ id: string }>(env, ['databases', 'delete', 'Archive', '--user', 'gina']);
  assert.equal(again.id, first.id);
});

test('a slug that is another database’s name is refused too: the id picks one', async () => {
  // "Games" takes the slug games, so a database named "games" gets games-2: `games` is the slug of the one
  // and the name of the other. Deleting by it removed "Games" and its games, not the database so named.
  await cliJson(env, ['users', 'add', 'hana']);
  const upper = (
    await cliJson<{ database: { id: string } }>(env, [
      'import',
      CLASSICS_PGN,
      '--user',
      'hana',
      '--database',
      'Games',
    ])
  ).database;
  const lower = await cliJson<Listed>(env, ['databases', 'add', 'games', '--user', 'hana']);
  assert.equal(lower.slug, 'games-2');
  const hanas = () => cliJson<Listed[]>(env, ['databases', 'list', '--user', 'hana']);
  const before = await hanas();
  const [row] = await queryStore<{ id: string }>(
    env.databaseUrl,
    `select id from games where database_id = '${upper.id}' limit 1`,
  );
  for (const args of [
    ['databases', 'delete', 'games', '--user', 'hana'],
    ['import', CLASSICS_PGN, '--user', 'hana', '--database', 'games', '--allow-duplicates'],
    ['games', 'move', row?.id ?? '', '--database', 'games'],
  ]) {
    const result = await run(env, args);
    assert.equal(result.code, 1, `${args.join(' ')}: ${result.stdout}`);
    assert.match(
      result.stderr,
      /^chessport: "games" names 2 databases of [^\n]+, as a slug and as a name: [^\n]+; give its id\n$/,
    );
    assert.ok(
      result.stderr.includes(`games (${upper.id})`) && result.stderr.includes(`games-2 (${lower.id})`),
    );
    assert.deepEqual(await hanas(), before, `${args.join(' ')}: nothing changed`);
  }
  const deleted = await cliJson<{ id: string }>(env, ['databases', 'delete', lower.id, '--user', 'hana']);
  assert.equal(deleted.id, lower.id);
  assert.deepEqual(
    (await hanas()).map((d) => [d.name, d.games]),
    [['Games', 4]],
  );
});

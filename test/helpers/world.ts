// The world most HTTP suites test against: two users with games, apps and tokens, all made by the CLI.
import { join } from 'node:path';
import { cliJson, type Env, FIXTURES, issueToken, type Server, startServer, tempEnv } from './harness.ts';

export const ALICE_PGN = join(FIXTURES, 'api/alice.pgn');
export const CLASSICS_PGN = join(FIXTURES, '../../src/cli/demo/classics.pgn');

export interface World {
  env: Env;
  server: Server;
  base: string;
  tokens: {
    alice: string;
    alice2: string;
    aliceOtherApp: string;
    aliceMeOnly: string;
    aliceRevoked: string;
    aliceExpired: string;
    bob: string;
  };
  alice: { main: { id: string; slug: string }; classics: { id: string; slug: string } };
  bob: { db: { id: string; slug: string }; gameIds: string[] };
  aliceInternalId: string;
  stop(): Promise<void>;
}

const ALL = 'user.read,databases.read,games.read';

export async function makeWorld(): Promise<World> {
  const env = tempEnv();
  const alice = await cliJson<{ id: string }>(env, [
    'users',
    'add',
    'alice',
    '--name',
    'Alice Example',
    '--email',
    'alice@example.org',
    '--image',
    'https://example.org/alice.png',
  ]);
  await cliJson(env, ['users', 'add', 'bob']);
  await cliJson(env, ['apps', 'add', 'app-one']);
  await cliJson(env, ['apps', 'add', 'app-two']);
  const issue = (user: string, app: string, scopes = ALL, extra: string[] = []) =>
    issueToken(env, user, app, scopes, extra);
  const main = await cliJson<{ id: string; slug: string }>(env, [
    'databases',
    'add',
    'Main Games',
    '--user',
    'alice',
  ]);
  await cliJson(env, ['import', ALICE_PGN, '--user', 'alice', '--database', main.slug]);
  const classics = (
    await cliJson<{ database: { id: string; slug: string } }>(env, [
      'import',
      CLASSICS_PGN,
      '--user',
      'alice',
      '--database',
      'Classics',
    ])
  ).database;
  const bobDb = (
    await cliJson<{ database: { id: string; slug: string } }>(env, [
      'import',
      CLASSICS_PGN,
      '--user',
      'bob',
      '--database',
      'Main Games',
    ])
  ).database;
  const tokens = {
    alice: await issue('alice', 'app-one'),
    alice2: await issue('alice', 'app-one'),
    aliceOtherApp: await issue('alice', 'app-two'),
    aliceMeOnly: await issue('alice', 'app-one', 'user.read'),
    aliceRevoked: await issue('alice', 'app-one'),
    aliceExpired: await issue('alice', 'app-one', ALL, ['--expires-in', '1s']),
    bob: await issue('bob', 'app-one'),
  };
  await cliJson(env, ['tokens', 'revoke', tokens.aliceRevoked]);
  const server = await startServer(env);
  const bobGames = await fetch(`${server.base}/api/v1/games`, {
    headers: { authorization: `Bearer ${tokens.bob}` },
  });
  const bobIds = ((await bobGames.json()) as { data: { id: string }[] }).data.map((g) => g.id);
  // The expired token was issued with a one-second lifetime; make sure it has passed.
  await new Promise((r) => setTimeout(r, 1100));
  return {
    env,
    server,
    base: `${server.base}/api/v1`,
    tokens,
    alice: { main, classics },
    bob: { db: bobDb, gameIds: bobIds },
    aliceInternalId: alice.id,
    stop: async () => {
      await server.stop();
      env.cleanup();
    },
  };
}

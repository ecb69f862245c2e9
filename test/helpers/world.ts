// The world most HTTP suites test against: two users with games, apps and tokens, written through the store
// as the CLI's commands write them, and the server, both in the test's process (in-process.ts).
import { join } from 'node:path';
import { type Env, FIXTURES, tempEnv } from './harness.ts';
import { type InProcessServer, seed, serveInProcess } from './in-process.ts';

export const ALICE_PGN = join(FIXTURES, 'api/alice.pgn');
export const CLASSICS_PGN = join(FIXTURES, '../../src/cli/demo/classics.pgn');

export interface World {
  env: Env;
  server: InProcessServer;
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
  // The server first: it opens (and creates) the store, which the seeding below writes through.
  let server: InProcessServer;
  try {
    server = await serveInProcess(env);
  } catch (error) {
    env.cleanup();
    throw error;
  }
  const s = seed(server.store);
  const alice = await s.addUser('alice', {
    name: 'Alice Example',
    email: 'alice@example.org',
    image: 'https://example.org/alice.png',
  });
  await s.addUser('bob');
  await s.addApp('app-one');
  await s.addApp('app-two');
  const issue = (user: string, app: string, scopes = ALL, expiresInMs?: number) =>
    s.issueToken(user, app, scopes, expiresInMs);
  const mainDb = await s.addDatabase('alice', 'Main Games');
  const main = { id: mainDb.id, slug: mainDb.slug };
  await s.importPgn(ALICE_PGN, 'alice', main.slug);
  const classics = await s.importPgn(CLASSICS_PGN, 'alice', 'Classics');
  const bobDb = await s.importPgn(CLASSICS_PGN, 'bob', 'Main Games');
  const tokens = {
    alice: await issue('alice', 'app-one'),
    alice2: await issue('alice', 'app-one'),
    aliceOtherApp: await issue('alice', 'app-two'),
    aliceMeOnly: await issue('alice', 'app-one', 'user.read'),
    aliceRevoked: await issue('alice', 'app-one'),
    // Expired a second ago.
    aliceExpired: await issue('alice', 'app-one', ALL, -1000),
    bob: await issue('bob', 'app-one'),
  };
  await s.revokeToken(tokens.aliceRevoked);
  const bobGames = await fetch(`${server.base}/api/v1/games`, {
    headers: { authorization: `Bearer ${tokens.bob}` },
  });
  const bobIds = ((await bobGames.json()) as { data: { id: string }[] }).data.map((g) => g.id);
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

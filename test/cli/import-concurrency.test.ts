// Imports that run at once into a database that does not exist yet create it once, and all import into it,
// on both dialects (each CLI process its own connection: the store cannot tell them from two machines).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliJson, type Env } from '../helpers/harness.ts';
import { createTestDatabase, dropTestDatabaseSync } from '../helpers/stores.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

// Per database: two processes that both look it up before either creates it are enough to make two, but
// whether they meet depends on timing. So several databases, each with several imports at once.
const DATABASES = ['w1', 'w2', 'w3'];
const IMPORTS = 4;

async function storeEnv(dialect: 'sqlite' | 'postgres'): Promise<Env> {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-test-'));
  const databaseUrl = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
  return {
    dir,
    databaseUrl,
    dialect,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    cleanup: () => {
      rmSync(dir, { recursive: true, force: true });
      if (dialect === 'postgres') dropTestDatabaseSync(databaseUrl);
    },
  };
}

for (const { dialect, skip } of DIALECTS) {
  describe(`concurrent imports on ${dialect}`, { skip }, () => {
    test(`${IMPORTS} imports at once into a new database make one database`, async () => {
      const env = await storeEnv(dialect);
      try {
        await cliJson(env, ['users', 'add', 'alice']);
        const runs = await Promise.all(
          DATABASES.flatMap((name) =>
            Array.from({ length: IMPORTS }, async () => {
              const args = ['import', CLASSICS_PGN, '--user', 'alice', '--database', name];
              // Each a process of its own: the subject is several commands on one store at once.
              const { database } = await cliJson<{ database: { id: string } }>(env, args, {
                childProcess: true,
              });
              return { name, id: database.id };
            }),
          ),
        );
        const list = await cliJson<{ id: string; name: string; games: number }[]>(env, [
          'databases',
          'list',
          '--user',
          'alice',
        ]);
        assert.deepEqual(
          list.map((d) => [d.name, d.games]).sort(),
          DATABASES.map((name) => [name, 4]),
          'one database of each name, each game once',
        );
        for (const { name, id } of runs) assert.equal(id, list.find((d) => d.name === name)?.id, name);
      } finally {
        env.cleanup();
      }
    });
  });
}

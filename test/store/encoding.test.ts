// Text in any script is stored as given, on SQLite as on PostgreSQL. A PostgreSQL database whose encoding
// cannot hold it (LATIN1 took `Émile` but not `李`, and an import stopped part-way at the first such name)
// is refused before anything is written.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { maskUrl } from '../../src/cli/store-url.ts';
import { openStore } from '../../src/store/index.ts';
import { DIALECTS } from '../helpers/dialects.ts';
import { cliJson, type Env, spawnCli } from '../helpers/harness.ts';
import {
  createTestDatabase,
  dropTestDatabase,
  POSTGRES_SKIP,
  queryPostgres,
  TEST_POSTGRES_URL,
} from '../helpers/stores.ts';

const LOGIN = '李四';
const NAME = 'Łukasz Ω 😀';
const WHITE = 'Ñandú, José';
const BLACK = 'Ωмега 李 😀';
const EVENT = 'Cafe\u0301 ﬁ Ⅻ';

/** The harness's view of a store the test made itself (it drops it itself too). */
function envAt(databaseUrl: string, dir: string): Env {
  const dialect = /^postgres(ql)?:/.test(databaseUrl) ? 'postgres' : 'sqlite';
  const env = { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' };
  return { dir, databaseUrl, dialect, env, cleanup: () => undefined };
}

/** Adds a user and imports a game through the CLI, then reads them back from the store. */
async function roundTrip(url: string, dir: string): Promise<void> {
  const env = envAt(url, dir);
  const file = join(dir, 'scripts.pgn');
  writeFileSync(
    file,
    `[Event "${EVENT}"]\n[White "${WHITE}"]\n[Black "${BLACK}"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n`,
  );
  await cliJson(env, ['users', 'add', LOGIN, '--name', NAME]);
  await cliJson(env, ['import', file, '--user', LOGIN, '--database', EVENT]);
  const store = await openStore(url);
  try {
    const user = await store.accounts.findUser(LOGIN);
    assert.equal(user?.name, NAME);
    const [database] = await store.databases.list(user?.id);
    assert.equal(database?.name, EVENT);
    const [game] = await store.games.list(user?.id ?? '', { limit: 2, offset: 0 });
    assert.deepEqual(
      [game?.event, game?.white.name, game?.black.name],
      [EVENT, WHITE, BLACK],
      'the game as imported',
    );
  } finally {
    await store.close();
  }
}

for (const { dialect, skip } of DIALECTS) {
  describe(`text in any script on ${dialect}`, { skip }, () => {
    test('a login, a name, a database name and players in any script are stored as given', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'chessport-encoding-'));
      const url = dialect === 'postgres' ? await createTestDatabase() : join(dir, 'store.sqlite');
      try {
        await roundTrip(url, dir);
      } finally {
        if (dialect === 'postgres') await dropTestDatabase(url);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

describe('PostgreSQL databases in other encodings', {
  skip: TEST_POSTGRES_URL ? false : POSTGRES_SKIP,
}, () => {
  test('SQL_ASCII stores the bytes it is sent, so any script too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chessport-encoding-'));
    const url = await createTestDatabase({ encoding: 'SQL_ASCII' });
    try {
      await roundTrip(url, dir);
    } finally {
      await dropTestDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('LATIN1 is refused in one line by every command, serve too, before anything is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chessport-encoding-'));
    const url = await createTestDatabase({ encoding: 'LATIN1' });
    try {
      const env = envAt(url, dir);
      for (const args of [
        ['users', 'add', LOGIN],
        ['users', 'list'],
        ['serve', '--port', '0'],
      ]) {
        const spawned = spawnCli(env, args);
        // A serve that started after all is stopped, and the assertion below says so.
        spawned.child.stdout?.on('data', () => {
          if (spawned.output().stdout.includes('Server listening at')) spawned.child.kill('SIGTERM');
        });
        const { code, stdout, stderr } = await spawned.exited;
        assert.equal(code, 1, `chessport ${args[0]} ran on a LATIN1 database: ${stdout}${stderr}`);
        assert.equal(
          stderr,
          `chessport: cannot open the store ${maskUrl(url)}: its database has the encoding LATIN1, which cannot ` +
            'hold every text a PGN file may bring (player names in any script): use a UTF8 database (createdb ' +
            '-E UTF8 -T template0 <name>; pg_dump and pg_restore move an existing one into it)\n',
        );
      }
      const tables = await queryPostgres(url, "select 1 from pg_tables where schemaname = 'public'");
      assert.deepEqual(tables, [], 'no table was created');
    } finally {
      await dropTestDatabase(url);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

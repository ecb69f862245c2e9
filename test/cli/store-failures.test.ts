// A store that fails under a command says so in one line the operator can act on: which store, what
// happened (full, locked by another, connection lost), what to do; an import adds how far it got. Before,
// the driver's message alone ("database or disk is full", "terminating connection due to administrator
// command") came out, with the hint meant for bugs (CHESSPORT_DEBUG=1), and a write under a PostgreSQL
// lock held elsewhere waited, silent, for as long as that session lived.
// The import on a full disk runs in the test's process (run: cliInProcess): its subject is what it says and
// what it leaves in the store, not its process.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { storeFailure, storeFailureLine } from '../../src/cli/store-failures.ts';
import { openStore } from '../../src/store/index.ts';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { DIALECTS, openTestStore } from '../helpers/dialects.ts';
import { cliJson, tempEnv } from '../helpers/harness.ts';
import { writeGames } from '../helpers/production.ts';
import { queryPostgres, queryStore, STORE_DIALECT } from '../helpers/stores.ts';

/** The error of `fn`, which must fail, and within 5 s. */
async function failureOf(fn: () => Promise<unknown>): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    fn().then(
      () => 'it did not fail',
      (error: unknown) => error,
    ),
    new Promise((resolve) => {
      timer = setTimeout(resolve, 5000, 'still waiting after 5 s');
    }),
  ]);
  clearTimeout(timer);
  if (typeof outcome === 'string') assert.fail(outcome);
  return outcome;
}

for (const { dialect, skip } of DIALECTS) {
  describe(`failures of a ${dialect} store, as the CLI says them`, { skip }, () => {
    test('a write under a lock that another holds too long', async () => {
      const t = await openTestStore(dialect);
      const store = await openStore(t.url, { lockTimeoutMs: 100 });
      let release = async () => undefined as unknown;
      try {
        if (dialect === 'sqlite') {
          const other = new Database(t.url);
          other.exec('begin immediate');
          release = async () => other.close();
        } else {
          const other = new pg.Client(t.url);
          await other.connect();
          await other.query('begin');
          await other.query('lock table users in exclusive mode');
          release = () => other.end();
        }
        const error = await failureOf(() => store.accounts.addUser({ login: 'late' }));
        const failure = storeFailure(error, t.url);
        assert.ok(failure, String(error));
        assert.match(
          storeFailureLine(failure),
          dialect === 'sqlite'
            ? /^another process held the store \S+ locked for more than 10 s \(database is locked\): run the command again when it is done$/
            : /^another session held a lock in the store \S+ for more than 10 s \(canceling statement due to lock timeout\): run the command again when it is done \(pg_locks shows who holds it\)$/,
        );
      } finally {
        await release();
        await store.close();
        await t.close();
      }
    });

    test('a connection terminated under a query (PostgreSQL)', {
      skip: dialect === 'postgres' ? false : 'PostgreSQL only',
    }, async () => {
      const t = await openTestStore(dialect);
      try {
        const sleeping = failureOf(() => sql`select pg_sleep(5)`.execute(t.store.db));
        await new Promise((resolve) => setTimeout(resolve, 200));
        await queryPostgres(
          t.url,
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and query like 'select pg_sleep%'",
        );
        const failure = storeFailure(await sleeping, t.url);
        assert.ok(failure);
        assert.match(
          storeFailureLine(failure),
          /^the connection to the store postgres:\/\/\S+ failed \(terminating connection due to administrator command\): run the command again once it answers$/,
        );
      } finally {
        await t.close();
      }
    });
  });
}

describe('a full disk (a small tmpfs)', () => {
  const root = process.getuid?.() === 0;
  test('the import stops saying the store is full, the store stays whole; run again once there is room, every game once', {
    skip:
      STORE_DIALECT !== 'sqlite'
        ? 'SQLite only'
        : root
          ? false
          : 'needs root to mount a tmpfs (the ulimit test of errors.test.ts covers a file size limit as non-root)',
  }, async (t) => {
    const mount = mkdtempSync(join(tmpdir(), 'chessport-full-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', mount], { stdio: 'pipe' });
    } catch (error) {
      rmSync(mount, { recursive: true, force: true });
      t.skip(`cannot mount a tmpfs here: ${(error as Error).message.split('\n')[0]}`);
      return;
    }
    const env = tempEnv({ DATABASE_URL: join(mount, 'store.sqlite') });
    env.databaseUrl = join(mount, 'store.sqlite');
    try {
      const file = writeGames(env.dir, 'many.pgn', 6000, 'Full', 'a comment that makes the games longer');
      await cliJson(env, ['users', 'add', 'alice']);
      const args = ['import', file, '--user', 'alice', '--database', 'full'];
      const full = await run(env, args);
      assert.equal(full.code, 1, full.stderr);
      assert.match(
        full.stderr,
        /^chessport: \S*many\.pgn: the import stopped after \d+ games were imported: the store \S+ is full \(database or disk is full\); free space on its disk, then run the command again: the games already stored are skipped\n$/,
      );
      const stored = Number(/after (\d+) games/.exec(full.stderr)?.[1]);
      const [check] = await queryStore<{ integrity_check: string }>(
        env.databaseUrl,
        'pragma integrity_check',
      );
      assert.equal(check?.integrity_check, 'ok');

      execFileSync('mount', ['-o', 'remount,size=64m', mount]);
      type Summary = { files: { imported: number; duplicates: number }[] };
      const [again] = (await cliJson<Summary>(env, args)).files;
      assert.equal(again?.duplicates, stored, 'what the message said was stored is skipped');
      assert.equal((again?.imported ?? 0) + stored, 6000);
      const [counts] = await queryStore<{ games: number; uniq: number }>(
        env.databaseUrl,
        'select cast(count(*) as integer) as games, cast(count(distinct content_hash) as integer) as uniq from games',
      );
      assert.deepEqual(counts, { games: 6000, uniq: 6000 });
    } finally {
      env.cleanup();
      execFileSync('umount', [mount]);
      rmSync(mount, { recursive: true, force: true });
    }
  });
});

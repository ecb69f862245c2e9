// An import killed with SIGKILL and run again leaves every game present exactly once: each batch commits in
// one transaction, and the second run skips what the first one committed. Two imports of one file at once
// into one database also leave each game once: their batches take turns, and each sees what the other
// committed before it (on SQLite through the game_keys log, which each process reads on from where it was).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { queryStore } from '../helpers/stores.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

const GAMES = 12_000;

/** Distinct games: the classics with a numbered Round tag each. */
function writeGames(file: string): void {
  const classics = readFileSync(CLASSICS_PGN, 'utf8')
    .trim()
    .split(/\n\n(?=\[Event )/);
  const out: string[] = [];
  for (let i = 0; i < GAMES; i++) {
    out.push((classics[i % classics.length] as string).replace('[Round "?"]', `[Round "${i + 1}"]`));
  }
  writeFileSync(file, `${out.join('\n\n')}\n`);
}

/** The user kim, her empty database Many, and a file of GAMES games to import into it. */
async function kimWithManyGames(env: Env): Promise<string> {
  const file = join(env.dir, 'many.pgn');
  writeGames(file);
  await cliJson(env, ['users', 'add', 'kim']);
  await cliJson(env, ['databases', 'add', 'Many', '--user', 'kim']);
  return file;
}

async function counts(databaseUrl: string): Promise<{ games: number; uniq: number }> {
  const [row] = await queryStore<{ games: number; uniq: number }>(
    databaseUrl,
    'select cast(count(*) as integer) as games, cast(count(distinct content_hash) as integer) as uniq from games',
  );
  return row ?? { games: 0, uniq: 0 };
}

test('SIGKILL during an import, then the same import again: every game exactly once', async () => {
  const env = tempEnv();
  try {
    const file = await kimWithManyGames(env);
    const child = spawn(process.execPath, [BIN, 'import', file, '--user', 'kim', '--database', 'many'], {
      env: env.env,
      stdio: 'ignore',
    });
    // Kill it once some batches have committed but before the end.
    const deadline = Date.now() + 60_000;
    let seen = 0;
    while (Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 25));
      try {
        seen = (await counts(env.databaseUrl)).games;
      } catch {
        seen = 0; // the store may not be readable at the very start
      }
      if (seen > 0) break;
    }
    assert.equal(child.exitCode, null, 'the import was still running when killed');
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const partial = await counts(env.databaseUrl);
    assert.ok(partial.games > 0 && partial.games < GAMES, `killed part-way (${partial.games} games)`);
    assert.equal(partial.uniq, partial.games);

    const again = await cliJson<{ files: { imported: number; duplicates: number }[] }>(env, [
      'import',
      file,
      '--user',
      'kim',
      '--database',
      'many',
    ]);
    assert.equal(again.files[0]?.duplicates, partial.games, 'what the first run committed is skipped');
    assert.equal((again.files[0]?.imported ?? 0) + partial.games, GAMES);
    assert.deepEqual(await counts(env.databaseUrl), { games: GAMES, uniq: GAMES });
  } finally {
    env.cleanup();
  }
});

test('two imports of the same file into one database at once: every game exactly once', async () => {
  const env = tempEnv();
  try {
    const file = await kimWithManyGames(env);
    const run = () => {
      const child = spawn(
        process.execPath,
        [BIN, 'import', file, '--user', 'kim', '--database', 'many', '--json'],
        { env: env.env, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      return once(child, 'exit').then(([code]) => {
        assert.equal(code, 0);
        return (JSON.parse(out) as { files: { imported: number; duplicates: number }[] }).files[0];
      });
    };
    const [a, b] = await Promise.all([run(), run()]);
    assert.ok(a && b);
    assert.equal(a.imported + b.imported, GAMES, 'each game imported by one of the two');
    assert.equal(a.duplicates + b.duplicates, GAMES, 'and skipped by the other');
    assert.deepEqual(await counts(env.databaseUrl), { games: GAMES, uniq: GAMES });
  } finally {
    env.cleanup();
  }
});

test('a database deleted while an import runs takes no more games: the import stops, saying so', async () => {
  const env = tempEnv();
  try {
    await kimWithManyGames(env);
    const classics = readFileSync(CLASSICS_PGN, 'utf8')
      .trim()
      .split(/\n\n(?=\[Event )/);
    const games = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) =>
        (classics[(from + i) % classics.length] as string).replace(
          '[Round "?"]',
          `[Round "${from + i + 1}"]`,
        ),
      ).join('\n\n');
    // Fed through a named pipe, so that the import is surely part-way when the database is deleted.
    const fifo = join(env.dir, 'games.fifo');
    execFileSync('mkfifo', [fifo]);
    const child = spawn(process.execPath, [BIN, 'import', fifo, '--user', 'kim', '--database', 'many'], {
      env: env.env,
      cwd: env.dir,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const input = createWriteStream(fifo);
    input.on('error', () => undefined); // EPIPE: the import stops reading once it fails
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = once(child, 'exit');
    input.write(`${games(0, 6000)}\n\n`);
    const deadline = Date.now() + 60_000;
    while ((await counts(env.databaseUrl)).games === 0) {
      assert.ok(Date.now() < deadline && child.exitCode === null, 'a first batch committed');
      await new Promise((r) => setTimeout(r, 25));
    }
    const deleted = await cliJson<{ gamesDeleted: number }>(env, [
      'databases',
      'delete',
      'many',
      '--user',
      'kim',
    ]);
    assert.ok(deleted.gamesDeleted > 0);
    input.end(`${games(6000, 6000)}\n`);
    const [code] = await exited;
    assert.equal(code, 1, 'the import fails');
    assert.match(stderr, /database "many" was deleted while the import ran/);
    const [live] = await queryStore<{ n: number }>(
      env.databaseUrl,
      'select cast(count(*) as integer) as n from games where deleted = 0',
    );
    assert.equal(live?.n, 0, 'no live game in the deleted database');
  } finally {
    env.cleanup();
  }
});

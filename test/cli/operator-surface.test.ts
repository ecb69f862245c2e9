// What the operator meets around the commands: `--version`, a Node.js too old to run them, which settings a
// command reads, CHESSPORT_DEBUG's off values, and counts in the text output said in the singular for one.
// The commands run in the test's process (run: cliInProcess), but for a Node.js version set by NODE_OPTIONS
// (it acts on a process that starts with it: bin/'s check) and cliBothWays, which checks that the real binary
// prints what the in-process run prints (--version, a refused setting).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cli, cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { writeGames } from '../helpers/production.ts';

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }
).version;

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

const withEnv = (extra: NodeJS.ProcessEnv): Env => ({ ...env, env: { ...env.env, ...extra } });

describe('--version', () => {
  test('--version and -V print the version of package.json, and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const result = await cliBothWays(env, [flag]);
      assert.deepEqual(result, { code: 0, stdout: `${VERSION}\n`, stderr: '' }, flag);
    }
  });
});

describe('a Node.js older than 22.18', () => {
  /** The environment of a command that sees `version` as Node's version (process.versions.node). */
  function onNode(version: string): Env {
    const module = join(env.dir, `node-${version}.mjs`);
    writeFileSync(module, `Object.defineProperty(process.versions, 'node', { value: '${version}' });\n`);
    const options = `${env.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(module).href}`.trim();
    return withEnv({ NODE_OPTIONS: options });
  }

  test('is refused in one line that says what to do (Node 20 failed with a stack trace)', async () => {
    for (const version of ['20.20.2', '22.17.1']) {
      const result = await cli(onNode(version), ['users', 'list']);
      assert.equal(result.code, 1, version);
      assert.equal(result.stdout, '');
      assert.match(
        result.stderr,
        new RegExp(
          `^chessport: needs Node\\.js 22\\.18 or later, and this is ${version.replaceAll('.', '\\.')}: [^\\n]*scripts/demo\\.sh[^\\n]*\\n$`,
        ),
      );
    }
  });

  test('22.18 and later run', async () => {
    for (const version of ['22.18.0', '24.0.0', '30.1.0']) {
      assert.deepEqual(await cli(onNode(version), ['--version']), {
        code: 0,
        stdout: `${VERSION}\n`,
        stderr: '',
      });
    }
  });
});

describe('each command checks the settings it reads', () => {
  // Settings of the server only; each value is refused by `serve`.
  const serverOnly: NodeJS.ProcessEnv = {
    REDIS_URL: 'bogus',
    PORT: 'eighty',
    RATE_LIMIT_MAX: '0',
    RATE_LIMIT_WINDOW: 'forever',
    LOG_LEVEL: 'loud',
    CHESSPORT_SECRET: 'short',
  };

  test('a bad server setting does not stop a store command (every one failed on it)', async () => {
    for (const [name, value] of Object.entries(serverOnly)) {
      const result = await run(withEnv({ [name]: value }), ['users', 'list', '--json']);
      assert.equal(result.code, 0, `${name}=${value}: ${result.stderr}`);
      assert.deepEqual(
        (JSON.parse(result.stdout) as { login: string }[]).map((u) => u.login),
        ['alice'],
      );
    }
  });

  test('serve and demo still refuse it, naming it, before they open the store', async () => {
    for (const command of [
      ['serve', '--port', '0'],
      ['demo', '--port', '0'],
    ]) {
      for (const [name, value] of Object.entries(serverOnly)) {
        const result = await run(withEnv({ [name]: value }), command);
        assert.equal(result.code, 1, `${command[0]} with ${name}=${value}`);
        assert.match(result.stderr, new RegExp(`^chessport: [^\\n]*${name}[^\\n]*\\n$`), result.stderr);
      }
    }
  });

  test('serve and demo refuse a bad setting of the server itself before a new store is made', async () => {
    const serverItself: NodeJS.ProcessEnv = {
      SHUTDOWN_TIMEOUT: 'bogus',
      TRUST_PROXY: '%%',
      PAGE_CACHE_MB: 'x',
      IDLE_TIMEOUT: 'never',
    };
    for (const command of [
      ['serve', '--port', '0'],
      ['demo', '--port', '0'],
    ]) {
      for (const [name, value] of Object.entries(serverItself)) {
        const store = join(env.dir, `fresh-${command[0]}-${name}.sqlite`);
        const result = await run(withEnv({ [name]: value, DATABASE_URL: store }), command);
        assert.equal(result.code, 1, `${command[0]} with ${name}=${value}`);
        assert.match(result.stderr, new RegExp(`^chessport: [^\\n]*${name}[^\\n]*\\n$`), result.stderr);
        assert.equal(existsSync(store), false, `${command[0]} with ${name}=${value} made ${store}`);
      }
    }
  });

  test('the store settings are still checked by store commands', async () => {
    const result = await cliBothWays(withEnv({ PG_POOL_MAX: 'many' }), ['users', 'list']);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, 'chessport: PG_POOL_MAX must be a positive integer, got "many"\n');
  });

  test('PG_POOL_MODE is session or transaction; anything else is refused, naming both', async () => {
    for (const value of ['statement', 'Transaction', 'pgbouncer']) {
      const result = await run(withEnv({ PG_POOL_MODE: value }), ['users', 'list']);
      assert.equal(result.code, 1, value);
      assert.match(
        result.stderr,
        new RegExp(
          `^chessport: invalid PG_POOL_MODE "${value}": use session \\([^\\n]*\\) or transaction \\([^\\n]*\\)\\n$`,
        ),
      );
    }
    for (const value of ['session', 'transaction']) {
      const result = await run(withEnv({ PG_POOL_MODE: value }), ['users', 'list', '--json']);
      assert.equal(result.code, 0, `${value}: ${result.stderr}`);
    }
  });

  test('DATABASE_LISTEN_URL must be a postgres:// URL, and is not echoed (it may hold a password)', async () => {
    for (const value of ['http://u:secret@db/x', 'db.example:5432', 'secret']) {
      const result = await run(withEnv({ DATABASE_LISTEN_URL: value }), ['users', 'list']);
      assert.equal(result.code, 1, value);
      assert.match(
        result.stderr,
        /^chessport: invalid DATABASE_LISTEN_URL: give a postgres:\/\/ URL [^\n]*\n$/,
      );
      assert.doesNotMatch(result.stderr, /secret/);
    }
  });
});

describe('CHESSPORT_DEBUG', () => {
  // A store that is a folder: an error the operator can act on, said in one line.
  const failing = (value: string) =>
    run(withEnv({ CHESSPORT_DEBUG: value }), ['--database-url', env.dir, 'users', 'list']);

  test('0, false, no, off (any case) and empty leave the stack trace out (any text added it)', async () => {
    for (const value of ['0', 'false', 'FALSE', 'no', 'Off', '', ' ']) {
      const result = await failing(value);
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        /^chessport: the store [^\n]+ is a folder[^\n]+\n$/,
        `CHESSPORT_DEBUG="${value}"`,
      );
    }
  });

  test('1, true, yes add it', async () => {
    for (const value of ['1', 'true', 'yes']) {
      const result = await failing(value);
      assert.equal(result.code, 1);
      assert.match(result.stderr, /\n {4}at /, `CHESSPORT_DEBUG="${value}"`);
    }
  });
});

describe('counts of one in the singular (--json unchanged)', () => {
  test('import: a file of one game, once and again; a database that takes one game', async () => {
    const one = writeGames(env.dir, 'one.pgn', 1, 'One');
    const args = ['import', one, '--user', 'alice', '--database', 'Singles'];
    const first = await run(env, args);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /one\.pgn: 1 imported, 0 duplicates skipped, 0 rejected \(1 game read in /);
    const again = await run(env, args);
    assert.match(again.stdout, /one\.pgn: 0 imported, 1 duplicate skipped, 0 rejected \(1 game read in /);

    await cliJson(env, ['databases', 'add', 'Capped', '--user', 'alice', '--max-games', '1']);
    const two = writeGames(env.dir, 'two.pgn', 2, 'Two');
    const capped = await run(env, ['import', two, one, '--user', 'alice', '--database', 'capped']);
    assert.equal(capped.code, 0, capped.stderr);
    assert.match(capped.stdout, /\n {2}stopped: the database reached its maxGames; 1 game not added\n/);
    assert.match(
      capped.stdout,
      /\ntotal: 1 imported, 0 duplicates skipped, 0 rejected \(2 games in 1 file read in [^\n]+\n$/,
    );
    const json = await cliJson<{ files: { duplicates: number }[] }>(env, args);
    assert.equal(json.files[0]?.duplicates, 1, 'the JSON keeps its keys');
  });

  test('databases delete: its 1 game', async () => {
    const one = writeGames(env.dir, 'gone.pgn', 1, 'Gone');
    await cliJson(env, ['import', one, '--user', 'alice', '--database', 'Gone']);
    const result = await run(env, ['databases', 'delete', 'gone', '--user', 'alice']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^deleted database gone \(\S+\) and its 1 game\n$/);
  });
});

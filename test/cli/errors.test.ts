// Whatever goes wrong, the CLI says it in one line on stderr and exits 1: never a stack trace (unless
// CHESSPORT_DEBUG asks for it), and a command that fails on its input fails before it writes anything.
// The commands run in the test's process (run: cliInProcess, with a working folder of their own through its
// cwd), as their subject is what they say and leave. Child processes (cli(), spawn) stay where the process is
// the subject or in-process would not be the same: `./twice.pgn` said back as given (in-process a relative
// name is said joined to the working folder); `serve` past its settings (a port in use, a store that does
// not open: its stop signals are the process's); a file size limit (ulimit); a closed pipe; and cliBothWays,
// which checks that the real binary says the same.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { BIN, type CliResult, cli, cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';
import { writeGames } from '../helpers/production.ts';
import { queryStore, STORE_DIALECT } from '../helpers/stores.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
});
after(() => env?.cleanup());

function assertOneLine(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /^chessport: [^\n]+\n$/, 'one line, no stack trace');
  assert.match(result.stderr, message);
}

async function databaseSlugs(): Promise<string[]> {
  return (await cliJson<{ slug: string }[]>(env, ['databases', 'list'])).map((d) => d.slug);
}

describe('import inputs are checked before anything is written', () => {
  const importInto = (database: string, ...files: string[]) =>
    run(env, ['import', ...files, '--user', 'alice', '--database', database, '--json']);

  test('a missing file: no database is created', async () => {
    assertOneLine(await importInto('ghost', join(env.dir, 'nope.pgn')), /nope\.pgn: no such file/);
    assert.ok(!(await databaseSlugs()).includes('ghost'));
  });

  test('a folder', async () => {
    assertOneLine(await importInto('folder', env.dir), /is a folder/);
    assert.ok(!(await databaseSlugs()).includes('folder'));
  });

  test('an unreadable file', { skip: process.getuid?.() === 0 && 'root reads every file' }, async () => {
    const file = join(env.dir, 'secret.pgn');
    writeFileSync(file, readFileSync(CLASSICS_PGN));
    chmodSync(file, 0o000);
    assertOneLine(await importInto('secret', file), /secret\.pgn: permission denied/);
    assert.ok(!(await databaseSlugs()).includes('secret'));
  });

  test('a good file then a missing one: the good one is not imported either', async () => {
    const result = await importInto('half', CLASSICS_PGN, join(env.dir, 'nope2.pgn'));
    assertOneLine(result, /nope2\.pgn: no such file/);
    assert.equal(result.stdout, '');
    assert.ok(!(await databaseSlugs()).includes('half'));
  });

  test('a file given twice, under one name or two: it was imported twice (with --allow-duplicates, its games twice)', async () => {
    const file = join(env.dir, 'twice.pgn');
    writeFileSync(file, readFileSync(CLASSICS_PGN));
    assertOneLine(
      await importInto('twice', file, CLASSICS_PGN, file),
      /twice\.pgn: given twice: name each file once/,
    );
    // The working folder is env.dir: ./twice.pgn is the same file (a child process, for the relative path).
    const result = await cli(env, [
      'import',
      file,
      './twice.pgn',
      '--allow-duplicates',
      '--user',
      'alice',
      '--database',
      'twice',
      '--json',
    ]);
    assertOneLine(result, /: \.\/twice\.pgn: given twice \(as \S+\/twice\.pgn\): name each file once\n$/);
    assert.ok(!(await databaseSlugs()).includes('twice'));
  });

  test('"-" and a quoted pattern: what they may have meant', async () => {
    assertOneLine(
      await importInto('dash', '-'),
      /^chessport: -: no such file \(standard input is \/dev\/stdin\)\n$/,
    );
    assertOneLine(
      await importInto('pattern', join(env.dir, '*.pgn')),
      /\*\.pgn: no such file \(a pattern is expanded by the shell only when it is not quoted\)\n$/,
    );
  });
});

test('the real binary says what the in-process runs say: a listing, and a refusal', async () => {
  const listed = await cliBothWays(env, ['users', 'list']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /alice/);
  assertOneLine(
    await cliBothWays(env, ['import', join(env.dir, 'nope.pgn'), '--user', 'alice', '--database', 'x']),
    /nope\.pgn: no such file/,
  );
});

describe('several files', () => {
  test('a summary per file, then their total', async () => {
    const a = writeGames(env.dir, 'total-a.pgn', 3, 'Total a');
    const b = writeGames(env.dir, 'total-b.pgn', 2, 'Total b');
    const result = await run(env, ['import', a, b, '--user', 'alice', '--database', 'totals']);
    assert.equal(result.code, 0, result.stderr);
    const lines = result.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 3);
    assert.match(lines[0] as string, /total-a\.pgn: 3 imported/);
    assert.match(lines[1] as string, /total-b\.pgn: 2 imported/);
    assert.match(
      lines[2] as string,
      /^total: 5 imported, 0 duplicates skipped, 0 rejected \(5 games in 2 files read in \d+\.\ds\)$/,
    );
    const one = await run(env, ['import', a, '--user', 'alice', '--database', 'totals']);
    assert.doesNotMatch(one.stdout, /^total:/m, 'one file: its summary is the total');
  });
});

describe('empty, overlong and odd inputs are refused before anything is written', () => {
  test('an empty --sector: every app given one would share the user ids', async () => {
    // `apps add x --sector "$SECTOR"` with the variable unset registered the app in the sector "".
    for (const sector of ['', '  ']) {
      assertOneLine(
        await run(env, ['apps', 'add', 'sectorless', '--sector', sector]),
        /^chessport: --sector must not be empty\n$/,
      );
    }
    const apps = await cliJson<{ name: string }[]>(env, ['apps', 'list']);
    assert.ok(!apps.some((a) => a.name === 'sectorless'));
  });

  test('a user\'s empty --name, --email or --image: /me showed "" where an unknown value is null', async () => {
    for (const flag of ['--name', '--email', '--image']) {
      for (const value of ['', ' ']) {
        assertOneLine(
          await run(env, ['users', 'add', 'nameless', flag, value]),
          new RegExp(`^chessport: ${flag} must not be empty\n$`),
        );
      }
    }
    assertOneLine(
      await run(env, ['users', 'add', 'nameless', '--name', 'Eve\nMallory']),
      /^chessport: --name must not hold control characters \(it holds U\+000A\)\n$/,
    );
    const logins = (await cliJson<{ login: string }[]>(env, ['users', 'list'])).map((u) => u.login);
    assert.ok(!logins.includes('nameless'));
  });

  test('logins and app names are at most 200 characters on both stores', async () => {
    // Each is a unique key: PostgreSQL failed on a long one with "index row size ... exceeds btree version 4
    // maximum 2704" (and asked for CHESSPORT_DEBUG), where SQLite took it.
    const long = (n: number) =>
      Array.from({ length: n }, (_, i) => String.fromCodePoint(0x1f400 + i)).join('');
    assertOneLine(
      await run(env, ['users', 'add', long(201)]),
      /^chessport: the login is at most 200 characters, got 201\n$/,
    );
    assertOneLine(
      await run(env, ['apps', 'add', long(700)]),
      /^chessport: the app name is at most 200 characters, got 700\n$/,
    );
    // 200 characters of 4 bytes each, which no compression shortens, fit the index.
    const user = await cliJson<{ login: string }>(env, ['users', 'add', long(200)]);
    assert.equal(user.login, long(200));
    const app = await cliJson<{ name: string }>(env, ['apps', 'add', long(200)]);
    assert.equal(app.name, long(200));
    const logins = (await cliJson<{ login: string }[]>(env, ['users', 'list'])).map((u) => u.login);
    assert.ok(!logins.some((login) => [...login].length > 200));
  });

  test('a name with a control character: a login "eve<line break>mallory" was listed as two users', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['users', 'add', 'eve\nmallory'],
        /^chessport: the login must not hold control characters \(it holds U\+000A\)\n$/,
      ],
      [
        ['apps', 'add', 'tab\tapp'],
        /^chessport: the app name must not hold control characters \(it holds U\+0009\)\n$/,
      ],
      [
        ['apps', 'add', 'sectored', '--sector', 's\u0085'],
        /^chessport: --sector must not hold control characters \(it holds U\+0085\)\n$/,
      ],
      [
        ['databases', 'add', 'x\u001by', '--user', 'alice'],
        /^chessport: the database name must not hold control characters \(it holds U\+001B\)\n$/,
      ],
      [
        ['import', CLASSICS_PGN, '--user', 'alice', '--database', 'a\rb'],
        /^chessport: --database must not hold control characters \(it holds U\+000D\)\n$/,
      ],
    ];
    for (const [args, message] of cases) assertOneLine(await run(env, args), message);
    const logins = (await cliJson<{ login: string }[]>(env, ['users', 'list'])).map((u) => u.login);
    assert.ok(!logins.some((login) => /eve|mallory/.test(login)));
    assert.ok(
      !(await cliJson<{ name: string }[]>(env, ['apps', 'list'])).some((a) => /app|sectored/.test(a.name)),
    );
    // Names from any script are fine: a bidi control is shown escaped, not obeyed.
    assert.equal(
      (await cliJson<{ login: string }>(env, ['users', 'add', 'Ωμέγα \u202e'])).login,
      'Ωμέγα \u202e',
    );
  });

  test('users add refuses a --name, --email or --image that /me could not serve as the spec names it', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['--image', 'javascript:alert(1)'],
        /^chessport: --image must be an http or https URL, got "javascript:alert\(1\)"\n$/,
      ],
      [['--image', 'example.org/a.png'], /--image must be an http or https URL/],
      [['--image', 'https://example.org/a b.png'], /--image must be an http or https URL/],
      [['--image', ''], /^chessport: --image must not be empty\n$/],
      [
        ['--email', 'nobody'],
        /^chessport: --email must be an e-mail address such as ann@example.org, got "nobody"\n$/,
      ],
      [['--email', 'a b@example.org'], /--email must be an e-mail address/],
      [['--email', ' '], /^chessport: --email must not be empty\n$/],
      [['--name', ''], /^chessport: --name must not be empty\n$/],
      [['--name', 'Ann\nLee'], /^chessport: --name must not hold control characters \(it holds U\+000A\)\n$/],
    ];
    for (const [options, message] of cases) {
      assertOneLine(await run(env, ['users', 'add', 'zoe', ...options]), message);
    }
    assert.ok(!(await cliJson<{ login: string }[]>(env, ['users', 'list'])).some((u) => u.login === 'zoe'));
    const zoe = await cliJson<Record<string, string>>(env, [
      'users',
      'add',
      'zoe',
      '--name',
      'Zoë Ünal',
      '--email',
      'zoe+chess@example.org',
      '--image',
      'http://example.org/zoe.png?size=64',
    ]);
    assert.deepEqual(
      [zoe.name, zoe.email, zoe.image],
      ['Zoë Ünal', 'zoe+chess@example.org', 'http://example.org/zoe.png?size=64'],
    );
  });

  test('a missing user or app: the command that creates it, quoted for a shell, or none for a blank name', async () => {
    const issue = (user: string, app: string) =>
      run(env, ['tokens', 'issue', '--user', user, '--app', app, '--scopes', 'games.read']);
    assertOneLine(
      await issue('ann lee', 'x'),
      /^chessport: no user "ann lee" \(create it with: chessport users add 'ann lee'\)\n$/,
    );
    assertOneLine(
      await issue('alice', "o'app"),
      /^chessport: no app "o'app" \(create it with: chessport apps add 'o'\\''app'\)\n$/,
    );
    // It said "(register it with: chessport apps add )".
    assertOneLine(await issue('alice', ''), /^chessport: no app ""\n$/);
  });

  test('an empty --database-url is refused, not read as "use DATABASE_URL or the default"', async () => {
    const cwd = join(env.dir, 'empty-url');
    mkdirSync(cwd);
    const defaults = { ...env, env: { ...env.env } };
    delete defaults.env.DATABASE_URL;
    for (const who of [env, defaults]) {
      assertOneLine(
        await run(who, ['--database-url', '', 'users', 'add', 'nowhere'], { cwd }),
        /^chessport: --database-url must not be empty\n$/,
      );
    }
    assert.deepEqual(readdirSync(cwd), [], 'no data/chessport.sqlite');
    const users = await cliJson<{ login: string }[]>(env, ['users', 'list']);
    assert.ok(!users.some((u) => u.login === 'nowhere'));
  });

  test('a bad port names where it came from', async () => {
    // Both said `invalid port "x"`: the environment may hold several settings.
    assertOneLine(
      await run({ ...env, env: { ...env.env, PORT: '80x' } }, ['serve']),
      /^chessport: invalid PORT "80x": give a port from 0 to 65535 \(0 picks a free one\)\n$/,
    );
    assertOneLine(await run(env, ['serve', '--port', '65536']), /^chessport: invalid --port "65536": /);
    assertOneLine(
      await run(env, ['demo', '--no-serve', '--port', '-1']),
      /^chessport: invalid --port "-1": /,
    );
  });

  test('sync: an empty --out or a --base-url that is not an http(s) address; no folder is made', async () => {
    const cwd = join(env.dir, 'sync-here');
    mkdirSync(cwd);
    const sync = (baseUrl: string, out: string) =>
      run(env, ['sync', '--base-url', baseUrl, '--token', 'cp_x', '--out', out], { cwd });
    // An empty --out made mirror.sqlite and sync.lock in the working folder.
    assertOneLine(await sync('http://127.0.0.1:9', ''), /^chessport: --out must not be empty\n$/);
    writeFileSync(join(env.dir, 'a-file'), 'x');
    assertOneLine(
      await sync('http://127.0.0.1:9', join(env.dir, 'a-file')),
      /^chessport: --out \S+a-file is not a folder: name the folder of the mirror\n$/,
    );
    // These made the mirror's folder and an empty mirror, then said "Invalid URL" (or "fetch failed").
    for (const url of ['chess.example.org', 'ftp://u:s3cret@chess.example.org', '']) {
      const result = await sync(url, 'mirror');
      assertOneLine(
        result,
        /^chessport: --base-url must be the http:\/\/ or https:\/\/ address of the server, /,
      );
      assert.doesNotMatch(result.stderr, /s3cret/);
    }
    assert.deepEqual(readdirSync(cwd), []);
  });

  test('games update names a missing file or a folder as the import does', async () => {
    const { database } = await cliJson<{ database: { id: string } }>(env, [
      'import',
      CLASSICS_PGN,
      '--user',
      'alice',
      '--database',
      'update-inputs',
    ]);
    const [game] = await queryStore<{ id: string }>(
      env.databaseUrl,
      `select id from games where database_id = '${database.id}' limit 1`,
    );
    const update = (file: string) => run(env, ['games', 'update', game?.id ?? '', file]);
    // It said "cannot read …: ENOENT: no such file or directory, open '…'".
    assertOneLine(await update(join(env.dir, 'gone.pgn')), /^chessport: [^\n]*gone\.pgn: no such file\n$/);
    assertOneLine(await update(env.dir), /: is a folder: name the PGN files in it\n$/);
  });

  test('games update refuses a game larger than the import checks, without holding its long line', async () => {
    const { database } = await cliJson<{ database: { id: string } }>(env, [
      'import',
      CLASSICS_PGN,
      '--user',
      'alice',
      '--database',
      'update-too-large',
    ]);
    const [game] = await queryStore<{ id: string; pgn: string }>(
      env.databaseUrl,
      `select id, pgn from games where database_id = '${database.id}' limit 1`,
    );
    const large = join(env.dir, 'one-long-line.pgn');
    // One comment line of 40 MB, past the import's largest game (32 MB).
    writeFileSync(large, `[Event "long"]\n\n1. e4 {${'x'.repeat(40 * 1024 * 1024)}} e5 1-0\n`);
    const result = await run(env, ['games', 'update', game?.id ?? '', large]);
    assertOneLine(
      result,
      /one-long-line\.pgn: the game is larger than the largest game chessport checks \(32 MB\)\n$/,
    );
    const [after] = await queryStore<{ pgn: string }>(
      env.databaseUrl,
      `select pgn from games where id = '${game?.id}'`,
    );
    assert.equal(after?.pgn, game?.pgn, 'the game is left as it was');
  });
});

describe('store and server failures are one line', () => {
  test('a folder or a file that is not a store as DATABASE_URL; the file is left as it was', async () => {
    const folder = join(env.dir, 'folder');
    mkdirSync(folder);
    const other = { ...env, env: { ...env.env, DATABASE_URL: folder } };
    assertOneLine(await run(other, ['users', 'list']), /store/);
    const notes = join(env.dir, 'notes.txt');
    writeFileSync(notes, 'not a database, but long enough to have a header of its own\n');
    assertOneLine(
      await run(env, ['--database-url', notes, 'users', 'list']),
      /cannot open the store .*notes\.txt: file is not a database/,
    );
    assert.equal(
      readFileSync(notes, 'utf8'),
      'not a database, but long enough to have a header of its own\n',
    );
  });

  test('a store URL of another scheme, or in a folder that does not exist, is refused; nothing is created', async () => {
    const cwd = join(env.dir, 'elsewhere');
    mkdirSync(cwd);
    const unsupported = await run(env, ['--database-url', 'mysql://app:s3cret@db/x', 'users', 'list'], {
      cwd,
    });
    assertOneLine(unsupported, /unsupported store "mysql:\/\/app:\*\*\*@db\/x": give a SQLite file path/);
    const missing = join(env.dir, 'missing/dir/x.sqlite');
    assertOneLine(
      await run(env, ['--database-url', missing, 'users', 'list'], { cwd }),
      /the folder .*missing\/dir of the store .* does not exist/,
    );
    assert.deepEqual(readdirSync(cwd), []);
    assert.ok(!existsSync(join(env.dir, 'missing')));
  });

  test('a PostgreSQL URL that does not parse: one line naming DATABASE_URL and its form, no password', async () => {
    // pg said only "Invalid URL" (behind "cannot open the store postgres://user:***@…").
    for (const url of ['postgres://user:pa ss@host:x/db', 'postgresql://u:s3cret@[::1:5432/db']) {
      for (const args of [
        ['users', 'list'],
        ['serve', '--port', '0'],
      ]) {
        // `serve` as a child process: its stop signals, set before the store opens, are the process's.
        const result = await (args[0] === 'serve' ? cli : run)(
          { ...env, env: { ...env.env, DATABASE_URL: url } },
          args,
        );
        assertOneLine(
          result,
          /^chessport: invalid DATABASE_URL: write it like postgres:\/\/user:password@host:5432\/database, /,
        );
        assert.doesNotMatch(result.stderr, /pa ss|s3cret|Invalid URL/);
      }
    }
  });

  test('a password in the query of a PostgreSQL URL (pg takes ?password= and ?sslpassword=) is never echoed', async () => {
    // Masked was only the user's password: `postgres://app@host/db?password=s3cret` went to the terminal
    // whole, and to the server's first log line.
    const url = 'postgres://app@127.0.0.1:1/chess?sslmode=disable&password=s3cret&ssl%70assword=k3y';
    for (const args of [
      ['users', 'list'],
      ['serve', '--port', '0'],
    ]) {
      const result = await (args[0] === 'serve' ? cli : run)(
        { ...env, env: { ...env.env, DATABASE_URL: url } },
        args,
      );
      assertOneLine(
        result,
        /the store postgres:\/\/app@127\.0\.0\.1:1\/chess\?sslmode=disable&password=\*\*\*&ssl%70assword=\*\*\* failed/,
      );
      assert.doesNotMatch(result.stderr, /s3cret|k3y/);
    }
  });

  test('the default store is created with its folder', async () => {
    const cwd = join(env.dir, 'fresh');
    mkdirSync(cwd);
    const defaults = { ...env, env: { ...env.env } };
    delete defaults.env.DATABASE_URL;
    assert.equal((await run(defaults, ['users', 'list'], { cwd })).code, 0);
    assert.ok(existsSync(join(cwd, 'data/chessport.sqlite')));
  });

  // A setting that is refused fails the command before its store opens and before it takes the stop signals.
  const serve = (extra: NodeJS.ProcessEnv) =>
    run({ ...env, env: { ...env.env, ...extra } }, ['serve', '--port', '0']);

  test('LOG_LEVEL and TRUST_PROXY are checked like PORT', { timeout: 20_000 }, async () => {
    assertOneLine(await serve({ LOG_LEVEL: 'verbose' }), /invalid LOG_LEVEL "verbose"/);
    assertOneLine(await serve({ TRUST_PROXY: 'garbage' }), /invalid TRUST_PROXY entry "garbage"/);
    assertOneLine(await serve({ TRUST_PROXY: 'loopback, 10.0.0.0/33' }), /"10\.0\.0\.0\/33"/);
    assertOneLine(await serve({ TRUST_PROXY: '10.0.0.0/255.0.255.0' }), /"10\.0\.0\.0\/255\.0\.255\.0"/);
  });

  test('REDIS_URL must be a redis:// or rediss:// URL; a password is never echoed', async () => {
    // ioredis took these as a host name ("http", "127.0.0.1:6379" fine, "mysql" a socket path): the server
    // started, never reached Redis, and every instance counted its limits alone.
    assertOneLine(await serve({ REDIS_URL: 'http://cache:6379' }), /invalid REDIS_URL scheme "http:\/\/"/);
    assertOneLine(
      await serve({ REDIS_URL: 'mysql://u:s3cret@cache' }),
      /invalid REDIS_URL scheme "mysql:\/\/"/,
    );
    assertOneLine(
      await serve({ REDIS_URL: 'redis://:s3cret@cache:99999' }),
      /invalid REDIS_URL: write it like/,
    );
    assertOneLine(await serve({ REDIS_URL: 'redis://' }), /invalid REDIS_URL: no host/);
    for (const url of ['mysql://u:s3cret@cache', 'redis://:s3cret@cache:99999'])
      assert.doesNotMatch((await serve({ REDIS_URL: url })).stderr, /s3cret/);
  });

  test('durations that a timer waits for are at most 24 days (a longer timer fires at once)', async () => {
    assertOneLine(
      await serve({ SHUTDOWN_TIMEOUT: '999999999d' }),
      /SHUTDOWN_TIMEOUT is at most 24d, got "999999999d"/,
    );
    assertOneLine(await serve({ RATE_LIMIT_WINDOW: '25d' }), /RATE_LIMIT_WINDOW is at most 24d, got "25d"/);
  });

  test('a duration setting that does not read as one is named: the environment may hold several', async () => {
    // "invalid duration "0"" left the operator to guess which of four variables held it.
    for (const name of ['RATE_LIMIT_WINDOW', 'SHUTDOWN_TIMEOUT', 'REQUEST_TIMEOUT', 'PG_ANSWER_TIMEOUT']) {
      assertOneLine(
        await serve({ [name]: '60' }),
        new RegExp(`^chessport: invalid ${name} "60": write it like 90s, 15m, 12h or 30d\n$`),
      );
    }
  });

  test('PAGE_CACHE_MB is at most the memory of the machine', { timeout: 20_000 }, async () => {
    // 9999999999 MB was taken: a byte count past 2^53, of a cache no machine could hold.
    assertOneLine(
      await serve({ PAGE_CACHE_MB: '9999999999' }),
      /^chessport: PAGE_CACHE_MB is at most \d+ \(the memory of this machine\), got "9999999999"\n$/,
    );
    const limit = process.constrainedMemory();
    const max = Math.floor(Math.min(totalmem(), limit > 0 ? limit : Infinity) / 2 ** 20);
    assertOneLine(await serve({ PAGE_CACHE_MB: String(max + 1) }), new RegExp(`at most ${max} \\(`));
  });

  test('CHESSPORT_SECRET must be at least 32 characters; it is never echoed', {
    timeout: 20_000,
  }, async () => {
    // 'hunter2' was taken as the key of every pairwise id and feed cursor.
    for (const secret of ['hunter2', 'q'.repeat(31)]) {
      const result = await serve({ CHESSPORT_SECRET: secret });
      assertOneLine(
        result,
        /^chessport: CHESSPORT_SECRET is too short to be a secret: give at least 32 random characters \(make them with: openssl rand -base64 32\)\n$/,
      );
      assert.ok(!result.stderr.includes(secret));
    }
    const enough = { ...env, env: { ...env.env, CHESSPORT_SECRET: 'q'.repeat(32) } };
    assert.equal((await run(enough, ['users', 'list'])).code, 0);
  });

  test('a port in use, an unknown host', { timeout: 30_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as { port: number };
      assertOneLine(
        await cli(env, ['serve', '--port', String(port)]),
        new RegExp(`cannot listen on 127\\.0\\.0\\.1 port ${port}: the port is in use`),
      );
    } finally {
      taken.close();
    }
    assertOneLine(
      await cli(env, ['serve', '--port', '0', '--host', '999.1.1.1']),
      /cannot listen on 999\.1\.1\.1 port 0: no such host/,
    );
  });

  test('a store that cannot grow (disk full): the import says how far it got and what to do; run again, it completes', {
    skip: STORE_DIALECT === 'postgres' ? 'SQLite only' : false,
  }, async () => {
    const file = writeGames(env.dir, 'many.pgn', 20_000, 'Full', 'a comment that makes the games longer');
    // A file size limit (RLIMIT_FSIZE; Node.js ignores its signal) makes the store's writes fail as on a
    // full disk, after some batches have committed: 12 MB holds the first batch, however large the writer
    // makes it (up to 5,000 of these games, some 5 MB in the store and as much in its WAL), and not all
    // 20,000 games (some 18 MB). SQLite then rolls the transaction back itself, and the
    // ROLLBACK that followed failed with "no transaction is active", which was all the operator saw; then
    // the driver's "disk I/O error" alone, naming neither the store nor what had been imported.
    const args = ['import', file, '--user', 'alice', '--database', 'full'];
    const limited = await new Promise<CliResult>((resolve) => {
      const command = ['sh', '-c', 'ulimit -f 12288 && exec "$0" "$@"', process.execPath, BIN, ...args];
      execFile(
        command[0] as string,
        command.slice(1),
        { env: env.env, cwd: env.dir },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
      );
    });
    // A slow machine may take more than 5 s to get there, and a log then gets a progress line first
    // (src/cli/progress.ts): it belongs there; what follows it is the one line of the error.
    const progress = /^\S*many\.pgn: [\d,]+ games?, \d+ games\/s, [^\n]*\n/gm;
    assertOneLine(
      { ...limited, stderr: limited.stderr.replace(progress, '') },
      /^chessport: \S*many\.pgn: the import stopped after (\d+) games were imported: the store \S*store\.sqlite (could not be written or read \(disk I\/O error\)|is full \(database or disk is full\)); [^\n]*then run the command again: the games already stored are skipped\n$/,
    );
    const stored = Number(/stopped after (\d+) games/.exec(limited.stderr)?.[1]);
    assert.ok(stored > 0 && stored < 20_000, `part of the file was stored (${stored} games)`);
    type Summary = { files: { imported: number; duplicates: number }[] };
    const [again] = (await cliJson<Summary>(env, args)).files;
    assert.equal(again?.duplicates, stored, 'what the message said was stored is skipped');
    assert.equal((again?.imported ?? 0) + stored, 20_000);
  });

  test('CHESSPORT_DEBUG=1 adds the stack trace', async () => {
    const debug = { ...env, env: { ...env.env, CHESSPORT_DEBUG: '1' } };
    const result = await run(debug, ['--database-url', env.dir, 'users', 'list']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /\n {4}at /);
    assert.match(result.stderr, /\nchessport: the store [^\n]+ is a folder[^\n]+\n$/);
  });
});

describe('a reader that goes away', () => {
  test('output into a closed pipe: the command does all its work and exits 0, without a stack trace', async () => {
    const files = ['a', 'b'].map((name) => writeGames(env.dir, `piped-${name}.pgn`, 3, `Piped ${name}`));
    for (const json of [true, false]) {
      const database = json ? 'Piped JSON' : 'Piped';
      const args = [
        'import',
        ...files,
        '--user',
        'alice',
        '--database',
        database,
        ...(json ? ['--json'] : []),
      ];
      // As `chessport import a b | head -c 0`: the reader's end is closed before anything is written.
      const child = spawn(process.execPath, [BIN, ...args], {
        env: env.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout.destroy();
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stderr, /EPIPE|node:events|\n {4}at /, 'no stack trace');
      const listed = await cliJson<{ name: string; games: number }[]>(env, [
        'databases',
        'list',
        '--user',
        'alice',
      ]);
      assert.equal(listed.find((d) => d.name === database)?.games, 6, 'both files imported');
    }
  });
});

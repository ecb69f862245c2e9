// The operator's CLI: --json on every command, clear errors, and an import that loses nothing.
// The commands run in the test's process (run: cliInProcess): the subject is what they print and store.
// The servers the API is checked against run in the test's process too (serveInProcess). Child processes stay
// for cliBothWays, which checks that the real binary prints what the in-process runs print, for a listing and
// a failure.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cliBothWays, cliJson, type Env, FIXTURES, http, tempEnv } from '../helpers/harness.ts';
import { serveInProcess } from '../helpers/in-process.ts';
import { CLASSICS_PGN } from '../helpers/world.ts';

let env: Env;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'carol', '--name', 'Carol']);
  await cliJson(env, ['apps', 'add', 'viewer']);
});
after(() => env?.cleanup());

/** The arguments of `tokens issue` for a token of carol's, of the app viewer, with `scopes`. */
const carolsToken = (scopes: string, ...extra: string[]) => [
  'tokens',
  'issue',
  '--user',
  'carol',
  '--app',
  'viewer',
  '--scopes',
  scopes,
  ...extra,
];

/** The arguments of `chessport import` of `file` into carol's database named `database`. */
const carolsImport = (file: string, database: string, ...extra: string[]) => [
  'import',
  file,
  '--user',
  'carol',
  '--database',
  database,
  ...extra,
];

/** carol's databases, as `databases list --json` gives them. */
const carolsDatabases = <T>() => cliJson<T[]>(env, ['databases', 'list', '--user', 'carol']);

type ImportJson = {
  database: { id: string; slug: string };
  files: {
    file: string;
    games: number;
    imported: number;
    duplicates: number;
    rejected: number;
    overLimit: number;
    stoppedAtMaxGames: boolean;
    skipped: boolean;
    rejections: { file: string; line: number; game: number; reason: string }[];
    rejectsFile: string | null;
    warnings: { file: string; line: number; game: number; warning: string }[];
  }[];
};

describe('CLI results and errors', () => {
  test('--json prints one JSON document on every command that prints a result', async () => {
    const user = await cliJson(env, ['users', 'add', 'dave']);
    assert.equal(user.login, 'dave');
    const app = await cliJson(env, ['apps', 'add', 'other', '--sector', 'shared-sector']);
    assert.equal(app.sector, 'shared-sector');
    const issued = await cliJson(env, [
      'tokens',
      'issue',
      '--user',
      'dave',
      '--app',
      'other',
      '--scopes',
      'games.read',
    ]);
    assert.match(String(issued.token), /^cp_[A-Za-z0-9_-]{43}$/, 'cp_ and 256 bits');
    const db = await cliJson(env, ['databases', 'add', 'Dave DB', '--user', 'dave']);
    assert.equal(db.slug, 'dave-db');
    const users = await cliJson<{ id: string; login: string }[]>(env, ['users', 'list']);
    assert.equal(users.find((u) => u.login === 'dave')?.id, user.id, 'users list --json has the id too');
    for (const args of [
      ['users', 'list'],
      ['apps', 'list'],
      ['tokens', 'list'],
      ['databases', 'list'],
    ]) {
      assert.ok(Array.isArray(await cliJson(env, args)), args.join(' '));
    }
  });

  const failures: [string, string[], RegExp][] = [
    ['a duplicate user', ['users', 'add', 'carol'], /already exists/],
    ['an unknown scope', carolsToken('games.write'), /unknown scope/],
    ['a bad duration', carolsToken('user.read', '--expires-in', '10 days'), /invalid duration/],
    [
      'an unknown user',
      ['tokens', 'issue', '--user', 'nobody', '--app', 'viewer', '--scopes', 'user.read'],
      /no user "nobody"/,
    ],
    [
      'an unknown app',
      ['tokens', 'issue', '--user', 'carol', '--app', 'nope', '--scopes', 'user.read'],
      /no app "nope"/,
    ],
    [
      'a bad --max-games',
      ['databases', 'add', 'X', '--user', 'carol', '--max-games', '-3'],
      /positive integer/,
    ],
    ['revoking an unknown token', ['tokens', 'revoke', 'cp_nope'], /no such token/],
    ['an empty login', ['users', 'add', ''], /the login must not be empty/],
    ['a blank app name', ['apps', 'add', ' '], /the app name must not be empty/],
    [
      'a blank database name',
      ['databases', 'add', '  ', '--user', 'carol'],
      /the database name must not be empty/,
    ],
    ['databases of an empty user', ['databases', 'list', '--user', ''], /no user ""/],
    ['an import into an empty database name', carolsImport(CLASSICS_PGN, ''), /--database must not be empty/],
    [
      'a --max-games beyond what the store holds',
      ['databases', 'add', 'Big', '--user', 'carol', '--max-games', '3000000000'],
      /--max-games must be at most 2147483647/,
    ],
  ];
  for (const [name, args, message] of failures) {
    test(`${name}: exit 1 with a clear message`, async () => {
      const result = await run(env, args);
      assert.equal(result.code, 1);
      assert.match(result.stderr, message);
      assert.ok(!result.stderr.includes('    at '), 'no stack trace');
    });
  }

  test('--max-games takes up to 2147483647 on every store', async () => {
    const db = await cliJson(env, [
      'databases',
      'add',
      'Huge',
      '--user',
      'carol',
      '--max-games',
      '2147483647',
    ]);
    assert.equal(db.maxGames, 2147483647);
    const list = await carolsDatabases<{ slug: string; maxGames: number }>();
    assert.equal(list.find((d) => d.slug === 'huge')?.maxGames, 2147483647);
    assert.ok(!list.some((d) => d.slug === 'big'), 'the refused one was not created');
  });

  test('the real binary prints what the in-process runs print: a listing, and a failure', async () => {
    const listed = await cliBothWays(env, ['users', 'list']);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /carol/);
    const refused = await cliBothWays(env, [
      'tokens',
      'issue',
      '--user',
      'nobody',
      '--app',
      'viewer',
      '--scopes',
      'user.read',
    ]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^chessport: /);
  });

  test('a missing required option is a usage error (exit code not 0)', async () => {
    const result = await run(env, ['tokens', 'issue', '--user', 'carol']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /required option/);
  });

  test('tokens list shows each state and never a token; revoke by id works against the API', async () => {
    const a = await cliJson<{ token: string; id: string }>(env, carolsToken('user.read'));
    const b = await cliJson<{ token: string; id: string }>(
      env,
      carolsToken('user.read', '--expires-in', '1s'),
    );
    const server = await serveInProcess(env);
    try {
      assert.equal((await http(server.base, '/api/v1/me', { token: a.token })).status, 200);
      await cliJson(env, ['tokens', 'revoke', a.id]);
      assert.equal((await http(server.base, '/api/v1/me', { token: a.token })).status, 401);
    } finally {
      await server.stop();
    }
    await new Promise((r) => setTimeout(r, 1100));
    const listed = await run(env, ['tokens', 'list', '--json']);
    assert.ok(!listed.stdout.includes(a.token) && !listed.stdout.includes(b.token));
    const states = new Map(
      (JSON.parse(listed.stdout) as { id: string; state: string }[]).map((t) => [t.id, t.state]),
    );
    assert.equal(states.get(a.id), 'revoked');
    assert.equal(states.get(b.id), 'expired');
  });
});

describe('import', () => {
  test('running an import again skips every game and adds none; --allow-duplicates adds them on purpose', async () => {
    const first = await cliJson<ImportJson>(env, carolsImport(CLASSICS_PGN, 'Twice'));
    assert.equal(first.files[0]?.imported, 4);
    const again = await cliJson<ImportJson>(env, carolsImport(CLASSICS_PGN, 'Twice'));
    assert.deepEqual([again.files[0]?.imported, again.files[0]?.duplicates], [0, 4]);
    assert.equal(again.database.id, first.database.id, 'the existing database is found by name');
    const forced = await cliJson<ImportJson>(env, carolsImport(CLASSICS_PGN, 'twice', '--allow-duplicates'));
    assert.equal(forced.files[0]?.imported, 4);
    const list = await carolsDatabases<{ slug: string; games: number }>();
    assert.equal(list.find((d) => d.slug === 'twice')?.games, 8);
  });

  test('a broken game is rejected with file, line, game number and reason; the rest is imported', async () => {
    const file = join(FIXTURES, 'import/mixed.pgn');
    const rejects = join(env.dir, 'mixed.rejected.pgn');
    const result = await cliJson<ImportJson>(env, carolsImport(file, 'Mixed', '--rejects', rejects));
    const summary = result.files[0];
    assert.deepEqual([summary?.games, summary?.imported, summary?.rejected], [3, 2, 1]);
    assert.equal(summary?.rejections.length, 1);
    const [rejection] = summary?.rejections ?? [];
    assert.equal(rejection?.file, file);
    assert.equal(rejection?.line, 11);
    assert.equal(rejection?.game, 2);
    assert.match(rejection?.reason ?? '', /Ke3/);
    assert.equal(summary?.rejectsFile, rejects);
    const original = readFileSync(file, 'utf8').split('\n\n[Event "Good two"]')[0]?.split('1-0\n\n')[1];
    assert.equal(readFileSync(rejects, 'utf8').trim(), original?.trim());
  });

  test('a game kept but not as written is reported as a warning, in the text and in --json', async () => {
    const file = join(env.dir, 'annotated.pgn');
    writeFileSync(
      file,
      '[Event "Fine"]\n\n1. e4 e5 *\n\n[Event "Annotated"]\n\n1. e4 e5 (1... c5 2. Nf3 d6 3. Bxh8) 2. Nf3 *\n',
    );
    const text = await run(env, carolsImport(file, 'Warned'));
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /2 imported, 0 duplicates skipped, 0 rejected/);
    assert.ok(
      text.stdout.includes(
        `  warning: ${file}:5 game 2: variation cut: illegal move 3.Bxh8 (ply 5, line 7)\n`,
      ),
      text.stdout,
    );
    const json = await cliJson<ImportJson>(env, carolsImport(file, 'Warned'));
    assert.deepEqual(json.files[0]?.warnings, [
      { file, line: 5, game: 2, warning: 'variation cut: illegal move 3.Bxh8 (ply 5, line 7)' },
    ]);
  });

  test("a CRLF file's rejected games are in the rejects file byte for byte, with CRLF between them", async () => {
    const good = '[Event "Good"]\r\n\r\n1. e4 e5 *\r\n';
    const bad = [
      '[Event "Bad one"]\r\n\r\n1. e4 e4 *\r\n',
      '[Event "Bad two"]\r\n\r\n1. Ke2 Ke7 2. Ke4 *\r\n',
    ];
    const file = join(env.dir, 'crlf.pgn');
    writeFileSync(file, [bad[0], good, bad[1]].join('\r\n'));
    const rejects = join(env.dir, 'crlf.rejected.pgn');
    const result = await cliJson<ImportJson>(env, carolsImport(file, 'CRLF', '--rejects', rejects));
    assert.deepEqual([result.files[0]?.imported, result.files[0]?.rejected], [1, 2]);
    assert.equal(readFileSync(rejects, 'utf8'), bad.map((g) => `${g}\r\n`).join(''));
  });

  test("a pipe's rejected games go to the working folder, not beside the pipe", async () => {
    const pipes = join(env.dir, 'pipes');
    const work = join(env.dir, 'work');
    mkdirSync(pipes);
    mkdirSync(work);
    const pipe = join(pipes, 'games.pgn');
    execFileSync('mkfifo', [pipe]);
    const writer = spawn('sh', ['-c', `printf '[Event "Bad"]\\n\\n1. e4 e4 *\\n' > '${pipe}'`]);
    const result = await run(env, carolsImport(pipe, 'Piped', '--json'), { cwd: work });
    writer.kill();
    assert.equal(result.code, 0, result.stderr);
    const summary = (JSON.parse(result.stdout) as ImportJson).files[0];
    assert.equal(summary?.rejected, 1);
    assert.equal(summary?.rejectsFile, join(work, 'games.pgn.rejected.pgn'));
    assert.deepEqual(readdirSync(pipes), ['games.pgn']);
  });

  test('one --rejects file collects the rejected games of every input file, and replaces an older one', async () => {
    const file = join(FIXTURES, 'import/mixed.pgn');
    const copy = join(env.dir, 'mixed-copy.pgn');
    writeFileSync(copy, readFileSync(file, 'utf8').replace(/Ke3/g, 'Ke4'));
    const rejects = join(env.dir, 'all.rejected.pgn');
    writeFileSync(rejects, '[Event "left from an older run"]\n\n*\n');
    const args = ['import', file, copy, '--user', 'carol', '--database', 'Both', '--rejects', rejects];
    const result = await cliJson<ImportJson>(env, args);
    assert.deepEqual(
      result.files.map((s) => [s.rejected, s.rejectsFile]),
      [
        [1, rejects],
        [1, rejects],
      ],
    );
    const text = readFileSync(rejects, 'utf8');
    assert.ok(text.includes('Ke3') && text.includes('Ke4') && !text.includes('older run'), text);
  });

  test('the default rejects file sits beside the input, or in the working folder when that is read-only', async () => {
    const file = join(FIXTURES, 'import/mixed.pgn');
    const result = await cliJson<ImportJson>(env, carolsImport(file, 'Mixed 2'));
    const where = result.files[0]?.rejectsFile ?? '';
    assert.ok(where === `${file}.rejected.pgn` || where === join(env.dir, 'mixed.pgn.rejected.pgn'), where);
    assert.ok(existsSync(where.startsWith('/') ? where : join(env.dir, where)));
  });

  test('a clean import writes no rejects file', async () => {
    const result = await cliJson<ImportJson>(env, carolsImport(CLASSICS_PGN, 'Clean'));
    assert.equal(result.files[0]?.rejectsFile, null);
  });

  test('maxGames: the import stops adding games at the limit and says so', async () => {
    await cliJson(env, ['databases', 'add', 'Small', '--user', 'carol', '--max-games', '2']);
    const result = await cliJson<ImportJson>(env, carolsImport(CLASSICS_PGN, 'small'));
    assert.equal(result.files[0]?.imported, 2);
    assert.equal(result.files[0]?.stoppedAtMaxGames, true);
    const text = await run(env, carolsImport(CLASSICS_PGN, 'small', '--allow-duplicates'));
    assert.match(text.stdout, /stopped: the database reached its maxGames/);
    const list = await carolsDatabases<{ slug: string; games: number }>();
    assert.equal(list.find((d) => d.slug === 'small')?.games, 2);
  });

  test('maxGames: the files after the one that filled the database are listed as skipped', async () => {
    await cliJson(env, ['databases', 'add', 'Tiny', '--user', 'carol', '--max-games', '3']);
    const mixed = join(FIXTURES, 'import/mixed.pgn');
    const latin = join(FIXTURES, 'import/latin1.pgn');
    const args = ['import', CLASSICS_PGN, mixed, latin, '--user', 'carol', '--database', 'tiny'];
    const result = await cliJson<ImportJson>(env, args);
    assert.deepEqual(
      result.files.map((f) => [f.file, f.imported, f.stoppedAtMaxGames, f.skipped]),
      [
        [CLASSICS_PGN, 3, true, false],
        [mixed, 0, true, true],
        [latin, 0, true, true],
      ],
    );
    const text = await run(env, args);
    assert.equal(text.code, 0);
    assert.match(text.stdout, /stopped: the database reached its maxGames/);
    const lines = text.stdout.split('\n');
    assert.ok(lines.includes(`${mixed}: skipped: the database reached its maxGames`), text.stdout);
  });

  test('a Latin-1 file is decoded: accented names arrive intact', async () => {
    await cliJson(env, carolsImport(join(FIXTURES, 'import/latin1.pgn'), 'Latin'));
    const { token } = await cliJson<{ token: string }>(env, carolsToken('games.read'));
    const server = await serveInProcess(env);
    try {
      const res = await http<{ data: { white: { name: string }; black: { name: string } }[] }>(
        server.base,
        '/api/v1/databases/latin/games',
        { token },
      );
      assert.equal(res.json.data[0]?.white.name, 'György, Székely');
      assert.equal(res.json.data[0]?.black.name, 'Müller, Jürgen');
    } finally {
      await server.stop();
    }
  });

  test('a missing input file fails clearly and imports nothing', async () => {
    const result = await run(env, carolsImport(join(env.dir, 'missing.pgn'), 'Nothing'));
    assert.equal(result.code, 1);
    assert.match(result.stderr, /missing\.pgn/);
  });
});

describe('demo', () => {
  test('seeds a demo store with games and a working token; running it again duplicates nothing', async () => {
    const demo = tempEnv();
    try {
      const first = await cliJson<{ store: string; token: string; urls: string[] }>(demo, [
        'demo',
        '--no-serve',
      ]);
      const again = await cliJson<{ token: string }>(demo, ['demo', '--no-serve']);
      assert.notEqual(first.token, again.token, 'each run prints a fresh token');
      const server = await serveInProcess(demo);
      try {
        for (const token of [first.token, again.token]) {
          const games = await http<{ data: unknown[] }>(server.base, '/api/v1/games', { token });
          assert.equal(games.status, 200);
          assert.equal(games.json.data.length, 4);
        }
        for (const url of first.urls) {
          const path = url.replace(/^http:\/\/[^/]+/, '');
          const res = await http(server.base, path, { token: first.token });
          assert.equal(res.status, 200, path);
        }
      } finally {
        await server.stop();
      }
    } finally {
      demo.cleanup();
    }
  });
});

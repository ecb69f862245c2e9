// A PGN file is anyone's text, and the CLI prints what it holds (player names, tags, rejection reasons) on
// the operator's terminal: no character of it may be one the terminal obeys instead of showing (ESC
// sequences recolour, clear the screen, set the window title; U+009B is a one-character CSI) or one that
// reorders what is shown (bidi controls). With --json the values stay exact.
// The commands run in the test's process (run: cliInProcess): the subject is the text, not the process (nor
// a terminal: stdout and stderr are pipes in both). Child processes stay for the server (startServer, which the
// game ids come from) and cliBothWays, which checks that the real binary prints the same escaped listing and
// refusal as the in-process run.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import {
  type CliResult,
  cliBothWays,
  cliJson,
  type Env,
  http,
  issueToken,
  type Server,
  startServer,
  tempEnv,
} from '../helpers/harness.ts';
import { queryPostgres } from '../helpers/stores.ts';

const ESC = '\x1b';
const TITLE = `${ESC}]0;owned${'\x07'}`;
const RED = `${ESC}[31m`;
const RLO = '\u202e';

let env: Env;
let file: string;
let server: Server;
let token: string;
before(async () => {
  env = tempEnv();
  await cliJson(env, ['users', 'add', 'alice']);
  await cliJson(env, ['apps', 'add', 'reader']);
  token = await issueToken(env, 'alice', 'reader', 'games.read');
  server = await startServer(env);
  // Game 1 is kept with hostile names, game 2 is rejected for a token holding ESC, game 3 is kept with
  // warnings quoting a Result tag that holds ESC; game 4 is a Latin-1 line whose byte 0x9B is U+009B.
  const text = Buffer.concat([
    Buffer.from(
      [
        `[Event "Title ${TITLE}"]`,
        `[White "Evil${RED}Red"]`,
        `[Black "Mirror ${RLO}desrever"]`,
        '[Result "1-0"]',
        '',
        '1. e4 e5 1-0',
        '',
        '[White "W"]',
        '[Black "B"]',
        '[Result "*"]',
        '',
        `1. e4 Zz${RED}9 *`,
        '',
        '[White "W3"]',
        '[Black "B3"]',
        '[Result "1-0"]',
        `[Result "0-1${RED}"]`,
        '',
        '1. d4 *',
        '',
        '[White "Csi ',
      ].join('\n'),
    ),
    Buffer.from([0x9b]),
    Buffer.from('31mLatin"]\n[Black "B4"]\n[Result "*"]\n\n1. c4 *\n'),
  ]);
  file = join(env.dir, 'hostile.pgn');
  writeFileSync(file, text);
});
after(async () => {
  await server?.stop();
  env?.cleanup();
});

/** No terminal control of any kind in the output: C0 but the line break, DEL, C1, bidi controls. */
function assertInert(result: CliResult, what: string): void {
  for (const [stream, text] of [
    ['stdout', result.stdout],
    ['stderr', result.stderr],
  ] as const) {
    const bad = /[^\n\u0020-\u007e\u00a0-\uffff]|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/.exec(text);
    assert.equal(bad, null, `${what}: ${stream} holds U+${bad?.[0].charCodeAt(0).toString(16)}: ${text}`);
  }
}

describe('what a PGN file holds never reaches the terminal as control characters', () => {
  test('the import summary, its rejections and warnings; --json keeps the values exact', async () => {
    const shown = await run(env, ['import', file, '--user', 'alice', '--database', 'hostile']);
    assert.equal(shown.code, 0, shown.stderr);
    assertInert(shown, 'import');
    assert.match(shown.stdout, /3 imported/);
    // Escaped where the text was, so the operator sees it.
    assert.match(shown.stdout, /unexpected token 'Zz\\u001b\[31m9'/);
    assert.match(shown.stdout, /"0-1\\u001b\[31m"/);

    const json = await run(env, ['games', 'delete', '--json', await gameOf('Evil')]);
    assertInert(json, 'games delete --json');
    const change = JSON.parse(json.stdout) as { white: { name: string }; black: { name: string } };
    assert.equal(change.white.name, `Evil${RED}Red`);
    assert.equal(change.black.name, `Mirror ${RLO}desrever`);
  });

  test('games delete and update print the players escaped; a game file that fails says why, escaped', async () => {
    const deleted = await run(env, ['games', 'delete', await gameOf('Csi')]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assertInert(deleted, 'games delete');
    assert.match(deleted.stdout, /Csi \\u009b31mLatin - B4/);

    const bad = join(env.dir, 'bad.pgn');
    writeFileSync(bad, `[White "x"]\n[Black "y"]\n\n1. e4 Qx${TITLE} *\n`);
    const refused = await run(env, ['games', 'update', await gameOf('W3'), bad]);
    assert.equal(refused.code, 1);
    assertInert(refused, 'games update');
    assert.match(refused.stderr, /'Qx\\u001b\]0'/);
    // CHESSPORT_DEBUG=1 adds the stack trace, whose first line is the same message.
    const debug = { ...env, env: { ...env.env, CHESSPORT_DEBUG: '1' } };
    const traced = await run(debug, ['games', 'update', await gameOf('W3'), bad]);
    assert.equal(traced.code, 1);
    assertInert(traced, 'games update with CHESSPORT_DEBUG=1');
    assert.match(traced.stderr, /\n\s+at /, 'a stack trace');
  });

  test('databases list shows a name holding controls escaped', async () => {
    // The CLI no longer takes such a name; a store of an older version may hold one.
    const refused = await cliBothWays(env, ['databases', 'add', `Mine${RED}${RLO}`, '--user', 'alice']);
    assert.equal(refused.code, 1);
    assertInert(refused, 'databases add');
    const { id } = await cliJson<{ id: string }>(env, ['databases', 'add', 'Mine', '--user', 'alice']);
    if (env.dialect === 'postgres') {
      await queryPostgres(env.databaseUrl, 'update databases set name = $1 where id = $2', [
        `Mine${RED}${RLO}`,
        id,
      ]);
    } else {
      const db = new Database(env.databaseUrl);
      db.prepare('update databases set name = ? where id = ?').run(`Mine${RED}${RLO}`, id);
      db.close();
    }
    const listed = await cliBothWays(env, ['databases', 'list']);
    assertInert(listed, 'databases list');
    assert.match(listed.stdout, /Mine\\u001b\[31m\\u202e/);
    const names = (await cliJson<{ name: string }[]>(env, ['databases', 'list'])).map((d) => d.name);
    assert.ok(names.includes(`Mine${RED}${RLO}`));
  });
});

/** The id of alice's live game whose White starts with `prefix`, from the API. */
async function gameOf(prefix: string): Promise<string> {
  const games = await http<{ data: { id: string; white: { name: string | null } }[] }>(
    `${server.base}/api/v1`,
    '/games?limit=200',
    { token },
  );
  const game = games.json.data.find((g) => g.white.name?.startsWith(prefix));
  assert.ok(game, `a game of ${prefix}`);
  return game.id;
}

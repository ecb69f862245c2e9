// An id, token or name that the CLI prints is taken back as it is printed, also one that begins with '-'
// (docs/cli.md "Ids that begin with '-'"): an OAuth grant id or access token is base64url, and one in 64 of
// those the OAuth library makes begins with '-', which commander alone reads as an option (`tokens revoke
// -UvAtN…`: unknown option; `tokens revoke -VAbc…`: the version printed, nothing revoked). Thousands of ids
// through the command's parser in-process, then the command on ids stored as such, in-process too (run:
// cliInProcess) but for one revoke by the real binary (its argv as Node gives it) and cliBothWays, which checks
// that the real binary prints what the in-process run prints, for a listing and an unknown option.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type Command, CommanderError } from 'commander';
import { chessportProgram } from '../../src/cli/program.ts';
import { openStore } from '../../src/store/index.ts';
import { cliInProcess as run } from '../helpers/cli-in-process.ts';
import { cli, cliBothWays, cliJson, type Env, tempEnv } from '../helpers/harness.ts';

/** What a parse came to: the command it would run, with its operands and options; or commander's refusal. */
type Parse =
  | { command: string; operands: unknown[]; options: Record<string, unknown> }
  | { error: CommanderError; output: string };

/** Thrown where the command's action would run. */
class Parsed extends Error {
  readonly command: Command;

  constructor(command: Command) {
    super('parsed');
    this.command = command;
  }
}

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

/** Parses `chessport <args>` as the command does, and stops before the command's action runs. */
async function parse(args: string[]): Promise<Parse> {
  const program = chessportProgram();
  let output = '';
  for (const command of everyCommand(program)) {
    command.configureOutput({
      writeOut: (text) => {
        output += text;
      },
      writeErr: (text) => {
        output += text;
      },
    });
  }
  program.hook('preAction', (_program, command) => {
    throw new Parsed(command);
  });
  try {
    await program.parseAsync(args, { from: 'user' });
  } catch (error) {
    if (error instanceof Parsed) {
      const path: string[] = [];
      for (let c: Command | null = error.command; c?.parent; c = c.parent) path.unshift(c.name());
      return {
        command: path.join(' '),
        operands: error.command.processedArgs,
        options: error.command.optsWithGlobals(),
      };
    }
    if (error instanceof CommanderError) return { error, output };
    throw error;
  }
  throw new Error(`chessport ${args.join(' ')} ran nothing`);
}

async function parsedAs(
  args: string[],
  command: string,
  operands: unknown[],
  options: Record<string, unknown> = {},
): Promise<void> {
  const got = await parse(args);
  assert.ok(!('error' in got), `chessport ${args.join(' ')}: ${'error' in got ? got.output : ''}`);
  assert.equal(got.command, command, args.join(' '));
  assert.deepEqual(got.operands, operands, args.join(' '));
  for (const [name, value] of Object.entries(options))
    assert.deepEqual(got.options[name], value, args.join(' '));
}

async function refusedAs(args: string[], code: string, message: RegExp): Promise<void> {
  const got = await parse(args);
  assert.ok('error' in got, `chessport ${args.join(' ')} was taken`);
  assert.equal(got.error.code, code, args.join(' '));
  assert.match(got.output, message, args.join(' '));
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** 43 base64url characters, as a grant id or an OAuth access token, beginning with `head`. */
function idStarting(head: string): string {
  let id = head;
  while (id.length < 43) id += BASE64URL[randomInt(64)];
  return id;
}

/** Each way an id is given to each command that takes one: the arguments, and what the command must get. */
type Case = (id: string, other: string) => [string[], string, unknown[], Record<string, unknown>?];

const CASES: Case[] = [
  (id) => [['tokens', 'revoke', id], 'tokens revoke', [id]],
  (id) => [['tokens', 'revoke', id, '--json'], 'tokens revoke', [id], { json: true }],
  (id) => [['tokens', 'revoke', '--json', id], 'tokens revoke', [id], { json: true }],
  (id) => [['tokens', 'revoke', '--', id], 'tokens revoke', [id]],
  (id) => [
    ['--database-url', 'x.sqlite', 'tokens', 'revoke', id],
    'tokens revoke',
    [id],
    { databaseUrl: 'x.sqlite' },
  ],
  (id) => [
    ['tokens', 'revoke', id, '--database-url', 'x.sqlite'],
    'tokens revoke',
    [id],
    { databaseUrl: 'x.sqlite' },
  ],
  (id) => [
    ['tokens', 'revoke', '--database-url=x.sqlite', id],
    'tokens revoke',
    [id],
    { databaseUrl: 'x.sqlite' },
  ],
  (id) => [['webhooks', 'remove', id], 'webhooks remove', [id]],
  (id) => [['webhooks', 'rotate-secret', id, '--json'], 'webhooks rotate-secret', [id], { json: true }],
  (id) => [['webhooks', 'disable', id], 'webhooks disable', [id]],
  (id) => [['webhooks', 'enable', '--json', id], 'webhooks enable', [id], { json: true }],
  (id) => [
    ['webhooks', 'deliveries', '--failed', id, '--limit', '5'],
    'webhooks deliveries',
    [id],
    { failed: true, limit: '5' },
  ],
  (id) => [['webhooks', 'retry', id], 'webhooks retry', [id]],
  (id) => [
    ['webhooks', 'update', id, '--events', 'grant.revoked'],
    'webhooks update',
    [id],
    { events: 'grant.revoked' },
  ],
  (id) => [['webhooks', 'ping', '--user', 'ann', id], 'webhooks ping', [id], { user: 'ann' }],
  (id, other) => [['games', 'update', id, other], 'games update', [id, other]],
  (id, other) => [
    ['games', 'update', '--json', other, '--', id],
    'games update',
    [other, id],
    { json: true },
  ],
  (id, other) => [['games', 'move', id, '--database', other], 'games move', [id], { database: other }],
  (id, other) => [['games', 'move', '--database', other, id], 'games move', [id], { database: other }],
  (id) => [['games', 'delete', id], 'games delete', [id]],
  (id, other) => [['databases', 'delete', id, '--user', other], 'databases delete', [id], { user: other }],
  // A new name comes after `--` (see below), and is then taken as it is too.
  (id) => [
    ['apps', 'add', '--device', '--public', '--', id],
    'apps add',
    [id],
    { device: true, public: true },
  ],
  (id) => [['apps', 'update', '--no-device', id], 'apps update', [id], { device: false }],
  (id) => [['users', 'add', '--name', 'Ann', '--', id], 'users add', [id], { name: 'Ann' }],
  (id, other) => [['databases', 'add', '--user', other, '--', id], 'databases add', [id], { user: other }],
  (id) => [['users', 'passwd', id, '--stdin'], 'users passwd', [id], { stdin: true }],
];

describe('the parser takes ids that begin with "-" as operands', () => {
  test('4,096 random ids that begin with "-", and as many that begin anyhow, given every way to every command', async () => {
    const ids = [
      ...Array.from({ length: 4096 }, () => idStarting('-')),
      ...Array.from({ length: 4096 }, () => randomBytes(32).toString('base64url')),
    ];
    for (const [i, id] of ids.entries()) {
      const other = idStarting(i % 2 === 0 ? '-' : 'x');
      const [args, command, operands, options] = (CASES[i % CASES.length] as Case)(id, other);
      await parsedAs(args, command, operands, options);
    }
  });

  test('ids that begin as an option does: -V, -h, --json, --help, --database-url, --, all dashes', async () => {
    for (const head of ['-V', '-h', '-', '--', '--json', '--help', '--database-url', '-Vh', '-hV', '---']) {
      const id = idStarting(head);
      for (const make of CASES) {
        const [args, command, operands, options] = make(id, idStarting('-'));
        await parsedAs(args, command, operands, options);
      }
    }
    const dashes = '-'.repeat(43);
    await parsedAs(['tokens', 'revoke', dashes], 'tokens revoke', [dashes]);
  });

  test('options, help and the version stay what they are', async () => {
    await refusedAs(['tokens', 'revoke', '-h'], 'commander.helpDisplayed', /Usage: chessport tokens revoke/);
    await refusedAs(
      ['tokens', 'revoke', 'x', '--help'],
      'commander.helpDisplayed',
      /Usage: chessport tokens revoke/,
    );
    await refusedAs(['tokens', 'revoke', '-V'], 'commander.version', /^\d+\.\d+\.\d+\n$/);
    await refusedAs(['--version'], 'commander.version', /^\d+\.\d+\.\d+\n$/);
    await parsedAs(['games', 'move', 'g1', '--database', '-d'], 'games move', ['g1'], { database: '-d' });
    await parsedAs(['games', 'move', '--database=-d', '-g'], 'games move', ['-g'], { database: '-d' });
    await parsedAs(['tokens', 'revoke', '--', '--json'], 'tokens revoke', ['--json'], { json: undefined });
    await refusedAs(
      ['tokens', 'revoke', 'id', '--database-url'],
      'commander.optionMissingArgument',
      /argument missing/,
    );
    await refusedAs(
      ['games', 'move', 'id', '--database'],
      'commander.optionMissingArgument',
      /argument missing/,
    );
    await parsedAs(['--database-url', '-x', 'tokens', 'revoke', 'id'], 'tokens revoke', ['id'], {
      databaseUrl: '-x',
    });
  });

  test('a genuinely unknown option is still refused, naming it', async () => {
    // Where the operands are given, or on a command without any.
    await refusedAs(
      ['tokens', 'revoke', 'abc', '--jsn'],
      'commander.unknownOption',
      /unknown option '--jsn'\n\(Did you mean --json\?\)/,
    );
    await refusedAs(
      ['tokens', 'revoke', '--jsn', 'abc'],
      'commander.unknownOption',
      /unknown option '--jsn'/,
    );
    await refusedAs(['tokens', 'revoke', '-Abc', '-Xyz'], 'commander.unknownOption', /unknown option '-Xyz'/);
    await refusedAs(
      ['games', 'update', 'a', 'b', '--bogus'],
      'commander.unknownOption',
      /unknown option '--bogus'/,
    );
    await refusedAs(['tokens', 'list', '--bogus'], 'commander.unknownOption', /unknown option '--bogus'/);
    await refusedAs(['tokens', 'list', '-Abc'], 'commander.unknownOption', /unknown option '-Abc'/);
    await refusedAs(['--bogus', 'tokens', 'list'], 'commander.unknownOption', /unknown option '--bogus'/);
    await refusedAs(['users', 'list', '--jsno'], 'commander.unknownOption', /Did you mean --json\?/);
    // A variadic command fills no operand with one: a mistyped option is not a file.
    await refusedAs(
      ['import', 'a.pgn', '--user', 'u', '--database', 'd', '--alow-duplicates'],
      'commander.unknownOption',
      /unknown option '--alow-duplicates'\n\(Did you mean --allow-duplicates\?\)/,
    );
    // A command that takes a new name: a mistyped option is refused, not registered as the name.
    await refusedAs(
      ['apps', 'add', '--devce'],
      'commander.unknownOption',
      /unknown option '--devce'\n\(Did you mean --device\?\)/,
    );
    await refusedAs(['users', 'add', '-x'], 'commander.unknownOption', /unknown option '-x'/);
    await refusedAs(
      ['databases', 'add', '--privat', '--user', 'u'],
      'commander.unknownOption',
      /unknown option '--privat'/,
    );
    await refusedAs(['tokens', 'revoke', 'a', 'b'], 'commander.excessArguments', /too many arguments/);
    await refusedAs(['tokens', 'revoke'], 'commander.missingArgument', /missing required argument/);
    await refusedAs(['tokens', 'bogus'], 'commander.unknownCommand', /unknown command 'bogus'/);
  });
});

describe('the command on ids that begin with "-", stored as such', () => {
  // New grant ids never begin with '-' (test/store/ids.test.ts), but a store holds those made before, and
  // an OAuth access token the library makes may: they are written here as the store would keep them.
  const grantIds = [idStarting('-V'), idStarting('--'), idStarting('-h')];
  const accessToken = idStarting('-');
  const endpointId = idStarting('-ep_');
  let env: Env;

  before(async () => {
    env = tempEnv({ WEBHOOK_ALLOW_PRIVATE: '1' });
    const ann = await cliJson<{ id: string }>(env, ['users', 'add', 'ann']);
    const app = await cliJson<{ id: string }>(env, [
      'apps',
      'add',
      'web',
      '--redirect-uri',
      'https://a.example/cb',
    ]);
    const added = await cliJson<{ id: string }>(env, [
      'webhooks',
      'add',
      '--app',
      'web',
      '--url',
      'http://127.0.0.1:9/',
    ]);
    const store = await openStore(env.databaseUrl);
    try {
      for (const id of grantIds) {
        const grant = { id, userId: ann.id, appId: app.id, scopes: ['games.read'], payload: '{}' };
        assert.equal(await store.oauth.grants.save(grant), true);
      }
      const token = {
        userId: ann.id,
        appId: app.id,
        scopes: ['games.read'],
        expiresAt: null,
        createdAt: Date.now(),
      };
      assert.equal(
        await store.oauth.grants.addToken({ ...token, token: accessToken, grantId: grantIds[0] as string }),
        true,
      );
      await store.db
        .updateTable('webhook_endpoints')
        .set({ id: endpointId })
        .where('id', '=', added.id)
        .execute();
    } finally {
      await store.close();
    }
  });
  after(() => env?.cleanup());

  const grantStates = async () =>
    new Map(
      (await cliJson<{ id: string; state: string }[]>(env, ['tokens', 'grants'])).map((g) => [g.id, g.state]),
    );

  test('tokens revoke takes an access token and grant ids that begin with "-", "-V", "--", "-h"', async () => {
    const token = await cliJson<{ state: string; grant: string }>(env, ['tokens', 'revoke', accessToken]);
    assert.deepEqual([token.state, token.grant], ['revoked', grantIds[0]]);
    const [versionLike, dashed, helpLike] = grantIds as [string, string, string];
    const revoked = await cli(env, ['tokens', 'revoke', versionLike, '--json']);
    assert.equal(revoked.code, 0, revoked.stderr);
    assert.deepEqual(JSON.parse(revoked.stdout).id, versionLike);
    assert.equal(
      (await run(env, ['tokens', 'revoke', dashed])).stdout,
      `revoked grant ${dashed} of ann to web, with its tokens\n`,
    );
    assert.equal((await run(env, ['tokens', 'revoke', '--', helpLike])).code, 0, '-- still ends the options');
    const states = await grantStates();
    for (const id of grantIds) assert.equal(states.get(id), 'revoked', id);
  });

  test('webhooks take an endpoint id that begins with "-"', async () => {
    const disabled = await cliJson<{ id: string; state: string }>(env, ['webhooks', 'disable', endpointId]);
    assert.deepEqual(disabled, { ...disabled, id: endpointId, state: 'disabled' });
    const listed = await cliBothWays(env, ['webhooks', 'deliveries', endpointId]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal((await run(env, ['webhooks', 'remove', endpointId])).code, 0);
    assert.deepEqual(await cliJson(env, ['webhooks', 'list']), []);
  });

  test('an unknown option is still one, in one clear line and the usage', async () => {
    const result = await cliBothWays(env, ['tokens', 'revoke', 'abc', '--jsn']);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^error: unknown option '--jsn'\n\(Did you mean --json\?\)\n\nUsage: chessport tokens revoke/,
    );
  });
});

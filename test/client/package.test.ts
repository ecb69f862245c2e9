// chessport/client as a consumer gets it: `npm pack` of the project (its `prepare` compiles the client into
// dist/client), the package put into a fresh project's node_modules, imported from a plain .mjs file under
// Node.js, which strips no types there, and called against a real server. Its declarations type-check a
// consumer's TypeScript.
//
// npm cannot install the package offline: npm 11 asks the registry for the full documents of the package's
// own dependencies (the server's: Fastify, pg...), and the npm cache holds only the abbreviated ones. So the
// tarball is unpacked where `npm install` would put it, without those dependencies, and `npm rebuild` runs its
// install scripts (postinstall) as an install would. That nothing else is installed also shows that the
// client loads no package.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { cliJson, type Env, http, ROOT, type Server, startServer, tempEnv } from '../helpers/harness.ts';
import { importInto, issue } from '../helpers/sync-setup.ts';

const run = promisify(execFile);

/** The address of a port nothing listens on. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
}
/** The project's tsc, run with this Node.js. */
function tscPath(): string {
  const manifest = fileURLToPath(import.meta.resolve('typescript/package.json'));
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { tsc: string } };
  return join(dirname(manifest), bin.tsc);
}

/**
 * What the consumer's script prints: the module's exports, where it loaded from, two answers, and what a
 * closed port gives.
 */
const CONSUMER_SCRIPT = `
import * as exported from 'chessport/client';
import { ChessportClient, ChessportError, ChessportNetworkError } from 'chessport/client';

const [baseUrl, token, closedUrl] = process.argv.slice(2);
const api = new ChessportClient({ baseUrl, token });
const me = await api.me();
const databases = await api.databases();
const games = [];
for await (const game of api.allGames({ limit: 2 })) games.push(game.id);
let refused;
try {
  await api.game('00000000-0000-4000-8000-000000000000');
} catch (error) {
  refused = error instanceof ChessportError ? { status: error.status, error: error.error } : String(error);
}
let unreachable;
try {
  await new ChessportClient({ baseUrl: closedUrl, token, retry: { maxRetries: 1, backoffMs: 1 } }).me();
} catch (error) {
  unreachable =
    error instanceof ChessportNetworkError
      ? { name: error.name, url: error.url, attempts: error.attempts, timedOut: error.timedOut, message: error.message }
      : String(error);
}
console.log(JSON.stringify({
  exports: Object.keys(exported).sort(),
  resolved: import.meta.resolve('chessport/client'),
  me, databases, games, refused, unreachable,
}));
`;

/** A consumer's TypeScript, strict, with an error on purpose when `broken`. */
const consumerTs = (broken: boolean) => `
import { ChessportClient, ChessportError, ChessportNetworkError, type GameDetail, type User } from 'chessport/client';

// Settings that may be unset, passed on as integrators write it, also under exactOptionalPropertyTypes.
declare const settings: { maxRetries?: number; fetch?: typeof fetch; signal?: AbortSignal; cursor?: string };
const api = new ChessportClient({
  baseUrl: 'https://chess.example.org',
  token: 'cp_x',
  retry: { maxRetries: settings.maxRetries },
  fetch: settings.fetch,
});
const { signal } = settings;
const me: User = await api.me({ signal });
for await (const page of api.feed({ cursor: settings.cursor }, { signal })) page.nextCursor.length;
const game: GameDetail = await api.game(me.id);
const white: string | null = game.white.name;
let failed: { url: string; attempts: number; timedOut: boolean; truncated: boolean; cause?: unknown } | undefined;
try {
  await api.databases();
} catch (error) {
  if (error instanceof ChessportNetworkError) failed = error;
}
${broken ? 'const wrong: number = game.pgn;' : ''}
export { ChessportError, failed, white };
`;

describe('chessport/client from an npm package', () => {
  let env: Env;
  let server: Server;
  let token: string;
  let dir: string;
  let tarball: string;
  let app: string;

  before(async () => {
    env = tempEnv({ RATE_LIMIT_MAX: '1000000' });
    await cliJson(env, ['users', 'add', 'carol']);
    await cliJson(env, ['apps', 'add', 'mirror']);
    await importInto(env, 'carol', 'Carol Games', writePgn(env.dir, 'carol.pgn', numberedGames('Carol', 5)));
    token = await issue(env, 'carol');
    server = await startServer(env);
    dir = join(env.dir, 'consumer');
    app = join(dir, 'app');
    mkdirSync(app, { recursive: true });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('npm pack builds dist/client and ships it, JavaScript and declarations, without the tests', async () => {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: ROOT,
      maxBuffer: 16 << 20,
    });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    assert.ok(packed);
    tarball = join(dir, packed.filename);
    const files = packed.files.map((file) => file.path);
    for (const name of ['index', 'client', 'errors', 'link', 'transport', 'types']) {
      assert.ok(files.includes(`dist/client/${name}.js`), `dist/client/${name}.js`);
      assert.ok(files.includes(`dist/client/${name}.d.ts`), `dist/client/${name}.d.ts`);
    }
    const built = files.filter((file) => file.startsWith('dist/'));
    assert.ok(
      built.every((file) => file.startsWith('dist/client/') && !file.includes('sync')),
      'only the client is built, not the sync engine',
    );
    assert.ok(!files.some((file) => file.startsWith('test/')), 'no tests in the package');
  });

  test('installed into a fresh project, it loads under plain Node.js and answers from a real server', async () => {
    assert.ok(tarball, 'packed');
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, dependencies: { chessport: `file:${tarball}` } }),
    );
    const installed = join(app, 'node_modules/chessport');
    mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    // The package's install scripts, as `npm install` runs them: the postinstall must not fail here, nor
    // complain (there is nothing to bundle in node_modules).
    const rebuilt = await run(
      'npm',
      ['rebuild', 'chessport', '--offline', '--no-audit', '--no-fund', '--foreground-scripts'],
      { cwd: app },
    );
    assert.doesNotMatch(`${rebuilt.stdout}${rebuilt.stderr}`, /ERR_|not bundled|Error/);

    writeFileSync(join(app, 'main.mjs'), CONSUMER_SCRIPT);
    const closed = await closedPort();
    const { stdout } = await run(process.execPath, ['main.mjs', server.base, token, closed], { cwd: app });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual(result.exports, ['ChessportClient', 'ChessportError', 'ChessportNetworkError']);
    assert.ok(String(result.resolved).endsWith('/node_modules/chessport/dist/client/index.js'));
    const base = `${server.base}/api/v1`;
    const raw = async (path: string) => (await http<{ data: unknown }>(base, path, { token })).json.data;
    assert.deepEqual(result.me, await raw('/me'));
    assert.deepEqual(result.databases, await raw('/databases'));
    assert.deepEqual(
      result.games,
      ((await raw('/games?limit=200')) as { id: string }[]).map((g) => g.id),
    );
    assert.deepEqual(result.refused, { status: 404, error: 'not_found' });
    assert.deepEqual(result.unreachable, {
      name: 'ChessportNetworkError',
      url: `${closed}/api/v1/me`,
      attempts: 2,
      timedOut: false,
      message: `GET ${closed}/api/v1/me failed after 2 attempts: connect ECONNREFUSED ${new URL(closed).host}`,
    });
  });

  test('its chessport command says in one line that it runs from a checkout, not from node_modules', async () => {
    assert.ok(tarball, 'packed');
    const bin = join(app, 'node_modules/chessport/bin/chessport.js');
    const failed = await run(process.execPath, [bin, 'sync', '--help'], { cwd: app }).then(
      () => assert.fail('the command ran'),
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    assert.equal(failed.code, 1);
    assert.equal(failed.stdout, '');
    // Node.js threw ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING with a stack trace.
    assert.match(
      failed.stderr ?? '',
      /^chessport: the command runs from a checkout of the project \(git clone, then npm install\), not from node_modules, .*chessport\/client\n$/,
    );
  });

  test('its declarations hold the public API only: no internals, nothing an older TypeScript cannot read', () => {
    const dist = join(app, 'node_modules/chessport/dist/client');
    const declarations = readdirSync(dist)
      .filter((name) => name.endsWith('.d.ts'))
      .map((name) => readFileSync(join(dist, name), 'utf8'))
      .join('\n');
    assert.match(declarations, /export declare class ChessportClient\b/);
    // The transport's internals named Uint8Array<ArrayBuffer>, which TypeScript before 5.7 cannot read: a
    // consumer without skipLibCheck failed to compile.
    for (const internal of [
      'Transport',
      'sleep',
      'DEFAULT_RETRY',
      'Answer',
      'Uint8Array',
      'errorFromResponse',
      'retryAfterSeconds',
      'linkTarget',
    ])
      assert.doesNotMatch(declarations, new RegExp(`\\b${internal}\\b`), internal);
  });

  test("its declarations type a consumer's strict TypeScript, and catch its type errors", async () => {
    assert.ok(tarball, 'packed');
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022', 'dom'],
          types: [],
          strict: true,
          exactOptionalPropertyTypes: true,
          noEmit: true,
        },
        files: ['main.ts'],
      }),
    );
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    writeFileSync(join(app, 'main.ts'), consumerTs(false));
    await run(process.execPath, [tscPath(), '-p', app], { cwd: app });
    writeFileSync(join(app, 'main.ts'), consumerTs(true));
    const broken = await run(process.execPath, [tscPath(), '-p', app], { cwd: app }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    assert.match(
      broken,
      /main\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
    );
  });
});

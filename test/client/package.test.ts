// @chessport/client as an integrator gets it: `npm pack` of packages/client (its `prepack` compiles the
// sources into dist/), the tarball installed into a fresh project with `npm install`, offline (the client
// has no dependency for npm to fetch), used from a plain .mjs file under Node.js, which strips no types in
// node_modules, and from strict TypeScript, type-checked with the package's declarations and run, both
// against a real server. Also: the chessport project itself, installed as a dependency, says in one line
// that its command runs from a checkout. The server runs in the test's process (serveInProcess); the programs
// that use the package are child processes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { numberedGames, writePgn } from '../helpers/changes-fixtures.ts';
import { CLIENT_PACKAGE, installClient, packClient } from '../helpers/client-package.ts';
import { cliJson, type Env, http, ROOT, tempEnv } from '../helpers/harness.ts';
import { type InProcessServer, serveInProcess } from '../helpers/in-process.ts';
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

/** Every file under a folder, relative to it, sorted. */
const filesUnder = (folder: string) => readdirSync(folder, { recursive: true, encoding: 'utf8' }).sort();

/**
 * What the consumer's script prints: the module's exports, where it loaded from, answers of the API, and
 * what a closed port gives.
 */
const CONSUMER_SCRIPT = `
import * as exported from '@chessport/client';
import { ChessportClient, ChessportError, ChessportNetworkError } from '@chessport/client';

const [baseUrl, token, closedUrl] = process.argv.slice(2);
const api = new ChessportClient({ baseUrl, token });
const me = await api.me();
const databases = await api.databases();
const games = [];
for await (const game of api.allGames({ limit: 2 })) games.push(game.id);
const changes = [];
for await (const page of api.feed({ limit: 2 })) changes.push(...page.data.map((change) => change.id));
const expanded = [];
for await (const page of api.feed({ limit: 2, expand: 'game' })) expanded.push(...page.data.map((change) => change.game));
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
  resolved: import.meta.resolve('@chessport/client'),
  me, databases, games, changes, expanded, refused, unreachable,
}));
`;

/**
 * A consumer's strict TypeScript that runs against the server: settings that may be unset passed on as
 * integrators write them (exactOptionalPropertyTypes), the answers typed. With an error on purpose when
 * `broken`.
 */
const consumerTs = (broken: boolean) => `
import {
  type ChangesPage,
  ChessportClient,
  ChessportError,
  ChessportNetworkError,
  type ExpandedChange,
  type GameDetail,
  type User,
} from '@chessport/client';

const [baseUrl = '', token = ''] = process.argv.slice(2);
const settings: {
  maxRetries?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  cursor?: string;
  userAgent?: string;
} = {};
const api = new ChessportClient({
  baseUrl,
  token,
  retry: { maxRetries: settings.maxRetries },
  fetch: settings.fetch,
  userAgent: settings.userAgent,
});
const { signal } = settings;
const me: User = await api.me({ signal });
const pages: ChangesPage[] = [];
for await (const page of api.feed({ cursor: settings.cursor, limit: 3 }, { signal })) pages.push(page);
const first = pages[0]?.data[0];
const game: GameDetail | undefined = first && (await api.game(first.id));
const white: string | null | undefined = game?.white.name;
const withGames: ChangesPage<ExpandedChange>[] = [];
for await (const page of api.feed({ cursor: settings.cursor, limit: 3, expand: 'game' })) withGames.push(page);
const expanded: GameDetail | null | undefined = withGames[0]?.data[0]?.game;
let failed: { url: string; attempts: number; timedOut: boolean; truncated: boolean; cause?: unknown } | undefined;
try {
  await api.databases();
} catch (error) {
  if (error instanceof ChessportNetworkError) failed = error;
  else if (error instanceof ChessportError) throw error;
}
${broken ? 'const wrong: number = game?.pgn;' : ''}
console.log(
  JSON.stringify({ me: me.id, pages: pages.length, white, expanded: expanded?.pgn === game?.pgn, failed: failed !== undefined }),
);
`;

describe('@chessport/client from its npm package', () => {
  let env: Env;
  let server: InProcessServer;
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
    server = await serveInProcess(env);
    dir = join(env.dir, 'consumer');
    app = join(dir, 'app');
    mkdirSync(app, { recursive: true });
  });
  after(async () => {
    await server?.stop();
    env?.cleanup();
  });

  test('npm pack builds dist/ and ships it, JavaScript and declarations, and nothing else', async () => {
    const packed = await packClient(dir);
    tarball = packed.tarball;
    const { files } = packed;
    for (const name of ['index', 'client', 'errors', 'link', 'transport', 'types']) {
      assert.ok(files.includes(`dist/${name}.js`), `dist/${name}.js`);
      assert.ok(files.includes(`dist/${name}.d.ts`), `dist/${name}.d.ts`);
    }
    assert.deepEqual(
      files.filter((file) => !file.startsWith('dist/')).sort(),
      ['LICENSE', 'README.md', 'package.json'],
      'no sources, tests or build files',
    );
    const manifest = JSON.parse(readFileSync(join(CLIENT_PACKAGE, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    assert.equal(manifest.name, '@chessport/client');
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies'])
      assert.equal(manifest[field], undefined, `no ${field}`);
  });

  test('the tarball says where the project is and carries its license text', async () => {
    assert.ok(tarball, 'packed');
    const unpacked = join(dir, 'unpacked');
    mkdirSync(unpacked, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', unpacked, '--strip-components=1']);
    // The GPL asks for its text to go with every copy; npm ships a LICENSE file of the package folder.
    assert.equal(
      readFileSync(join(unpacked, 'LICENSE'), 'utf8'),
      readFileSync(join(ROOT, 'LICENSE'), 'utf8'),
      "the project's LICENSE",
    );
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as {
      license: string;
      homepage?: string;
      repository?: { type: string; url: string; directory: string };
      bugs?: { url: string };
    };
    assert.equal(manifest.license, 'GPL-3.0-or-later');
    assert.match(manifest.homepage ?? '', /^https:\/\/\S+$/);
    assert.deepEqual(Object.keys(manifest.repository ?? {}).sort(), ['directory', 'type', 'url']);
    assert.equal(manifest.repository?.type, 'git');
    assert.match(manifest.repository?.url ?? '', /^git\+https:\/\/\S+\.git$/);
    assert.equal(manifest.repository?.directory, 'packages/client');
    assert.match(manifest.bugs?.url ?? '', /^https:\/\/\S+$/);
  });

  test('npm install puts the client and nothing else into a fresh project', async () => {
    assert.ok(tarball, 'packed');
    assert.doesNotMatch(await installClient(app, tarball), /ERR|warn/i);
    const modules = join(app, 'node_modules');
    assert.deepEqual(
      readdirSync(modules).filter((name) => name !== '.package-lock.json'),
      ['@chessport'],
    );
    assert.deepEqual(readdirSync(join(modules, '@chessport')), ['client']);
    assert.ok(
      filesUnder(join(modules, '@chessport/client')).every(
        (file) => ['package.json', 'README.md', 'LICENSE'].includes(file) || file.startsWith('dist'),
      ),
    );
  });

  test('a plain .mjs file loads it under Node.js and gets what the server answers', async () => {
    writeFileSync(join(app, 'main.mjs'), CONSUMER_SCRIPT);
    const closed = await closedPort();
    const { stdout } = await run(process.execPath, ['main.mjs', server.base, token, closed], { cwd: app });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    assert.deepEqual(result.exports, [
      'ChessportClient',
      'ChessportError',
      'ChessportNetworkError',
      'ChessportOAuthError',
      'OAuthTokens',
      'discoverAuthorizationServer',
      'startDeviceAuthorization',
    ]);
    assert.ok(String(result.resolved).endsWith('/node_modules/@chessport/client/dist/index.js'));
    const base = `${server.base}/api/v1`;
    const raw = async (path: string) => (await http<{ data: unknown }>(base, path, { token })).json.data;
    assert.deepEqual(result.me, await raw('/me'));
    assert.deepEqual(result.databases, await raw('/databases'));
    const listed = ((await raw('/games?limit=200')) as { id: string }[]).map((g) => g.id);
    assert.deepEqual(result.games, listed);
    assert.deepEqual(result.changes, listed, 'the feed, in change order: the import order here');
    const details = await Promise.all(listed.map((id) => raw(`/games/${id}`)));
    assert.deepEqual(result.expanded, details, "feed({ expand: 'game' }): each change with its game");
    assert.deepEqual(result.refused, { status: 404, error: 'not_found' });
    assert.deepEqual(result.unreachable, {
      name: 'ChessportNetworkError',
      url: `${closed}/api/v1/me`,
      attempts: 2,
      timedOut: false,
      message: `GET ${closed}/api/v1/me failed after 2 attempts: connect ECONNREFUSED ${new URL(closed).host}`,
    });
  });

  test('its declarations hold the public API only: no internals, nothing an older TypeScript cannot read', () => {
    const dist = join(app, 'node_modules/@chessport/client/dist');
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
      'postForm',
      'checkedToken',
      'untilAborted',
      'tokenSet',
    ])
      assert.doesNotMatch(declarations, new RegExp(`\\b${internal}\\b`), internal);
  });

  test("strict TypeScript type-checks with its declarations, catches a consumer's type error, and runs", async () => {
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
          noUncheckedIndexedAccess: true,
          noEmit: true,
        },
        files: ['main.ts', 'globals.d.ts'],
      }),
    );
    // process.argv without @types/node, which the fresh project does not install.
    writeFileSync(join(app, 'globals.d.ts'), 'declare const process: { argv: string[] };\n');
    writeFileSync(join(app, 'main.ts'), consumerTs(true));
    const broken = await run(process.execPath, [tscPath(), '-p', app], { cwd: app }).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? '',
    );
    assert.match(
      broken,
      /main\.ts\(\d+,\d+\): error TS2322: Type 'string \| undefined' is not assignable to type 'number'/,
    );
    writeFileSync(join(app, 'main.ts'), consumerTs(false));
    await run(process.execPath, [tscPath(), '-p', app], { cwd: app });
    const { stdout } = await run(process.execPath, ['main.ts', server.base, token], { cwd: app });
    const me = (await http<{ data: { id: string } }>(`${server.base}/api/v1`, '/me', { token })).json.data;
    assert.deepEqual(JSON.parse(stdout), {
      me: me.id,
      pages: 2,
      white: 'Carol White 1',
      expanded: true,
      failed: false,
    });
  });
  test('TypeScript with moduleResolution node (node10), which ignores exports, finds the types', async (t) => {
    assert.ok(tarball, 'packed');
    // TypeScript 7 no longer has node10, which older projects still use: TypeScript 5 checks it, installed
    // into a project of its own (from npm's cache when it holds it).
    const legacy = join(dir, 'legacy');
    await installClient(legacy, tarball);
    const typescript5 = await run(
      'npm',
      ['install', 'typescript@5.9.3', '--prefer-offline', '--no-audit', '--no-fund'],
      { cwd: legacy },
    ).then(
      () => true,
      () => false,
    );
    if (!typescript5) return t.skip("TypeScript 5 could not be installed (offline, and not in npm's cache)");
    writeFileSync(
      join(legacy, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'commonjs',
          moduleResolution: 'node',
          lib: ['es2022', 'dom'],
          types: [],
          strict: true,
          noEmit: true,
        },
        files: ['main.ts'],
      }),
    );
    const tsc5 = join(legacy, 'node_modules/typescript/bin/tsc');
    const check = async () =>
      run(process.execPath, [tsc5, '-p', legacy], { cwd: legacy }).then(
        () => '',
        (error: { stdout?: string }) => error.stdout ?? 'tsc failed',
      );
    const uses = `
import { ChessportClient, type GameDetail, type GameFilters } from '@chessport/client';
const api = new ChessportClient({ baseUrl: 'https://chess.example.org', token: 'cp_x' });
const filters: GameFilters = { player: 'Carlsen, Magnus', color: 'white', dateFrom: '2024-03-01' };
export const list = api.games({ ...filters, limit: 10 });
export const byIds: Promise<GameDetail[]> = api.gamesByIds(['00000000-0000-4000-8000-000000000000']);
`;
    writeFileSync(join(legacy, 'main.ts'), uses);
    assert.equal(await check(), '', 'the declarations found and read');
    // A type error of the consumer's is caught: the types are the package's, not an implicit any.
    writeFileSync(join(legacy, 'main.ts'), `${uses}export const wrong: number = api.apiBase;\n`);
    assert.match(
      await check(),
      /main\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/,
    );
  });
});

describe('the chessport project installed as a dependency', () => {
  test('its chessport command says in one line that it runs from a checkout, not from node_modules', async () => {
    const env = tempEnv();
    try {
      // Without scripts: the project's `prepare` rebuilds packages/client/dist, which the other suites of the
      // run load meanwhile; the checkout's dist, built by `npm ci`, is what the tarball needs.
      const { stdout } = await run(
        'npm',
        ['pack', '--json', '--ignore-scripts', '--pack-destination', env.dir],
        {
          cwd: ROOT,
          maxBuffer: 16 << 20,
        },
      );
      const [packed] = JSON.parse(stdout) as { filename: string }[];
      assert.ok(packed);
      // npm cannot install the project offline (it asks the registry for the full documents of the server's
      // dependencies, which the cache lacks): the tarball is unpacked where npm would put it.
      const tarball = join(env.dir, packed.filename);
      const app = join(env.dir, 'app');
      const installed = join(app, 'node_modules/chessport');
      mkdirSync(installed, { recursive: true });
      writeFileSync(
        join(app, 'package.json'),
        JSON.stringify({ name: 'app', private: true, dependencies: { chessport: `file:${tarball}` } }),
      );
      await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
      // The package's install scripts, as `npm install` runs them: the postinstall must not fail here, nor
      // complain (there is nothing to bundle in node_modules).
      const rebuilt = await run(
        'npm',
        ['rebuild', 'chessport', '--offline', '--no-audit', '--no-fund', '--foreground-scripts'],
        { cwd: app },
      );
      assert.doesNotMatch(`${rebuilt.stdout}${rebuilt.stderr}`, /ERR_|not bundled|Error/);
      const bin = join(installed, 'bin/chessport.js');
      const failed = await run(process.execPath, [bin, 'sync', '--help'], { cwd: env.dir }).then(
        () => assert.fail('the command ran'),
        (error: { code?: number; stdout?: string; stderr?: string }) => error,
      );
      assert.equal(failed.code, 1);
      assert.equal(failed.stdout, '');
      // Node.js threw ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING with a stack trace.
      assert.match(
        failed.stderr ?? '',
        /^chessport: the command runs from a checkout of the project \(git clone, then npm ci\), not from node_modules, .*install @chessport\/client\n$/,
      );
    } finally {
      env.cleanup();
    }
  });
});

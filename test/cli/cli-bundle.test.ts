// The `chessport` command starts from the bundle of its modules that the install made, and only while the
// checkout is where it was made and every source file and package it was made from is unchanged
// (bin/cli-bundle.js); else from the sources. From its bundle, its worker threads start from theirs
// (src/workers/bundle.ts). The bundles checked here are made in a folder of the test's, from the sources as
// they are (scripts/vendor-bundles.ts), under node_modules as the install's: the packages left out of the
// bundle resolve from there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { BUNDLE_DIR, fileHash, freshCliBundle } from '../../bin/cli-bundle.js';
import { makeBundles } from '../../scripts/vendor-bundles.ts';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/chessport.js');
const noEsbuild =
  !existsSync(join(ROOT, 'node_modules/esbuild/package.json')) &&
  'esbuild is not installed (npm install --omit=dev): nothing is bundled';

/**
 * Runs `node entry args` on the store in dir; its output, and the URL of every module that any of its
 * threads loaded (a hook that Node also runs in each worker thread writes them to a file).
 */
function traced(dir: string, entry: string, args: string[]): { stdout: string; loaded: string[] } {
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { appendFileSync } from 'node:fs';
import module from 'node:module';
module.registerHooks({
  load(url, context, next) {
    appendFileSync(${JSON.stringify(log)}, url + '\\n');
    return next(url, context);
  },
});`,
  );
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, entry, ...args], {
    env: { ...process.env, DATABASE_URL: join(dir, 'store.sqlite') },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  return { stdout: run.stdout, loaded: readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

const typeScript = (loaded: string[]) => loaded.filter((url) => url.endsWith('.ts'));

describe('from a bundle of the sources as they are', { skip: noEsbuild }, () => {
  let dir: string;
  let bundle: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chessport-cli-bundle-'));
    bundle = mkdtempSync(join(ROOT, 'node_modules/.cache/chessport-test-'));
    assert.ok(await makeBundles(bundle));
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(bundle, { recursive: true, force: true });
  });

  test('a command loads no TypeScript module', () => {
    const main = join(bundle, 'main.mjs');
    traced(dir, main, ['users', 'add', 'kim']);
    const { stdout, loaded } = traced(dir, main, ['users', 'list']);
    assert.match(stdout, /kim/);
    assert.deepEqual(typeScript(loaded), []);
    assert.equal(freshCliBundle(bundle), pathToFileURL(main).href);
  });

  test('an import starts both kinds of worker thread from their bundles: no thread loads TypeScript', () => {
    // One game of 8.4 MB (a long comment): enough text for the checking workers (src/import/normalize-pool.ts)
    // and for the checkpoint thread (src/import/batch-writer.ts).
    const pgn = join(dir, 'large.pgn');
    writeFileSync(pgn, `[Event "x"]\n[Result "*"]\n\n{${`${'a'.repeat(79)}\n`.repeat(105_000)}} 1. e4 *\n`);
    const main = join(bundle, 'main.mjs');
    traced(dir, main, ['users', 'add', 'lee']);
    const { stdout, loaded } = traced(dir, main, ['import', pgn, '--user', 'lee', '--database', 'big']);
    assert.match(stdout, /1 imported/);
    assert.deepEqual(typeScript(loaded), []);
    for (const worker of ['normalize-worker.mjs', 'checkpoint-worker.mjs'])
      assert.ok(loaded.includes(pathToFileURL(join(bundle, 'workers', worker)).href), worker);
  });
});

test('bin/chessport.js starts from the installed bundle exactly while it is fresh, else from the sources', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-cli-bundle-'));
  try {
    const fresh = freshCliBundle();
    const { loaded } = traced(dir, BIN, ['users', 'list']);
    if (fresh) {
      assert.ok(loaded.includes(fresh), `${fresh} not loaded`);
      assert.deepEqual(typeScript(loaded), []);
    } else {
      assert.ok(loaded.includes(pathToFileURL(join(ROOT, 'src/cli/main.ts')).href));
      assert.ok(!loaded.some((url) => url.startsWith(pathToFileURL(BUNDLE_DIR).href)));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a bundle is used while its checkout, sources and packages are unchanged, not after a change', () => {
  const source = 'src/cli/main.ts';
  const commander = JSON.parse(readFileSync(join(ROOT, 'node_modules/commander/package.json'), 'utf8')) as {
    version: string;
  };
  const good = {
    root: ROOT,
    bundle: 'main.mjs',
    inputs: { [source]: fileHash(join(ROOT, source)) },
    packages: { commander: commander.version },
  };
  const made: string[] = [];
  const dir = (manifest: object | null) => {
    const d = mkdtempSync(join(tmpdir(), 'chessport-cli-bundle-'));
    made.push(d);
    if (manifest) writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
    return d;
  };
  try {
    const fresh = dir(good);
    assert.equal(freshCliBundle(fresh), pathToFileURL(join(fresh, 'main.mjs')).href);
    const stale = {
      changed: dir({ ...good, inputs: { [source]: 'a'.repeat(64) } }),
      upgraded: dir({ ...good, packages: { commander: '0.0.1' } }),
      gone: dir({ ...good, inputs: { 'src/no-such-file.ts': 'a'.repeat(64) } }),
      moved: dir({ ...good, root: join(ROOT, 'elsewhere') }),
      none: dir(null),
    };
    for (const [name, d] of Object.entries(stale)) assert.equal(freshCliBundle(d), undefined, name);
  } finally {
    for (const d of made) rmSync(d, { recursive: true, force: true });
  }
});

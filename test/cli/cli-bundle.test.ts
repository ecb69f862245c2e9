// The `chessport` command starts from the bundle of its modules that `npm install` made, and only while
// every source file and package it was made from is unchanged (bin/cli-bundle.js); else from the sources.
// (The CLI and HTTP suites run every command through bin/chessport.js, so after an install they test the
// bundle, the server's chunk included.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { CLI_BUNDLE_DIR, freshCliBundle } from '../../bin/cli-bundle.js';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/chessport.js');
const installed = existsSync(join(CLI_BUNDLE_DIR, 'manifest.json'));
const absent = !installed && 'no CLI bundle: esbuild was not installed (npm install --omit=dev)';

/** Runs `chessport args` on the store in dir; its output, and the URL of every module it loaded. */
function traced(dir: string, args: string[]): { stdout: string; loaded: string[] } {
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import module from 'node:module';
const urls = [];
module.registerHooks({ load(url, context, next) { urls.push(url); return next(url, context); } });
process.on('exit', () => process.stderr.write(JSON.stringify(urls)));`,
  );
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, BIN, ...args], {
    env: { ...process.env, DATABASE_URL: join(dir, 'store.sqlite') },
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  return { stdout: run.stdout, loaded: JSON.parse(run.stderr) as string[] };
}

test('after npm install, a command loads no TypeScript module: its own come from the bundle', {
  skip: absent,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'chessport-cli-bundle-'));
  try {
    traced(dir, ['users', 'add', 'kim']);
    const { stdout, loaded } = traced(dir, ['users', 'list']);
    assert.match(stdout, /kim/);
    assert.deepEqual(
      loaded.filter((url) => url.endsWith('.ts')),
      [],
    );
    assert.ok(loaded.some((url) => url.startsWith(pathToFileURL(CLI_BUNDLE_DIR).href)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the bundle is used while its sources and packages are unchanged, not after a change', () => {
  const source = 'src/cli/main.ts';
  // The same digest as the install's manifest: SHA-256 of the file's bytes, in hex.
  const hash = (file: string) =>
    createHash('sha256')
      .update(readFileSync(join(ROOT, file)))
      .digest('hex');
  const commander = JSON.parse(readFileSync(join(ROOT, 'node_modules/commander/package.json'), 'utf8')) as {
    version: string;
  };
  const dir = (name: string, manifest: object | null) => {
    const d = mkdtempSync(join(tmpdir(), `chessport-cli-bundle-${name}-`));
    if (manifest) writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
    return d;
  };
  const fresh = dir('fresh', {
    bundle: 'main.mjs',
    inputs: { [source]: hash(source) },
    packages: { commander: commander.version },
  });
  const changed = dir('changed', {
    bundle: 'main.mjs',
    inputs: { [source]: 'a'.repeat(64) },
    packages: { commander: commander.version },
  });
  const upgraded = dir('upgraded', {
    bundle: 'main.mjs',
    inputs: { [source]: hash(source) },
    packages: { commander: '0.0.1' },
  });
  const gone = dir('gone', {
    bundle: 'main.mjs',
    inputs: { 'src/no-such-file.ts': 'a'.repeat(64) },
    packages: {},
  });
  const none = dir('none', null);
  try {
    assert.equal(freshCliBundle(fresh), pathToFileURL(join(fresh, 'main.mjs')).href);
    for (const d of [changed, upgraded, gone, none]) assert.equal(freshCliBundle(d), undefined, d);
  } finally {
    for (const d of [fresh, changed, upgraded, gone, none]) rmSync(d, { recursive: true, force: true });
  }
});

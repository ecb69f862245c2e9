// Worker threads start from the bundles `npm install` made, and only while their sources are unchanged
// (src/workers/bundle.ts); otherwise from the TypeScript sources.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { fileHash, WORKER_BUNDLE_DIR, workerUrl } from '../../src/workers/bundle.ts';

const ROOT = join(import.meta.dirname, '../..');
const ENTRIES = ['src/import/normalize-worker.ts', 'src/store/sqlite/checkpoint-worker.ts'];
const installed = existsSync(join(WORKER_BUNDLE_DIR, 'manifest.json'));

test('after npm install, both workers start from their bundles', {
  skip: !installed && 'no worker bundles: esbuild was not installed (npm install --omit=dev)',
}, () => {
  for (const entry of ENTRIES) {
    const url = workerUrl(pathToFileURL(join(ROOT, entry)));
    assert.match(url.href, /\/node_modules\/\.cache\/chessport-workers\/[a-z-]+\.mjs$/, entry);
    assert.ok(existsSync(url), url.href);
  }
});

test('a bundle is used while its sources are unchanged, not after a change, and not without a manifest', () => {
  const entry = 'src/import/normalize-worker.ts';
  const url = pathToFileURL(join(ROOT, entry));
  const source = join(ROOT, 'src/import/normalize-batch.ts');
  const dir = (name: string, hash: string | null) => {
    const d = mkdtempSync(join(tmpdir(), `chessport-bundle-${name}-`));
    const manifest = { [entry]: { bundle: 'w.mjs', inputs: { 'src/import/normalize-batch.ts': hash } } };
    if (hash !== null) writeFileSync(join(d, 'manifest.json'), JSON.stringify(manifest));
    return d;
  };
  const fresh = dir('fresh', fileHash(source));
  const stale = dir('stale', 'a'.repeat(64));
  const none = dir('none', null);
  try {
    assert.equal(workerUrl(url, fresh).href, pathToFileURL(join(fresh, 'w.mjs')).href);
    assert.equal(workerUrl(url, stale).href, url.href);
    assert.equal(workerUrl(url, none).href, url.href);
  } finally {
    for (const d of [fresh, stale, none]) rmSync(d, { recursive: true, force: true });
  }
});

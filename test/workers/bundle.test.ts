// Worker threads start from the bundles written into the command's bundle, and from their sources when the
// code runs from its sources (src/workers/bundle.ts). test/cli/cli-bundle.test.ts runs an import from a
// bundle and sees both workers start from theirs.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { WORKER_BUNDLES, workerUrl } from '../../src/workers/bundle.ts';

const ROOT = join(import.meta.dirname, '../..');
const entry = pathToFileURL(join(ROOT, 'src/import/normalize-worker.ts'));

test('from the sources, a worker starts from its sources', () => {
  assert.deepEqual(WORKER_BUNDLES, {});
  assert.equal(workerUrl(entry).href, entry.href);
});

test('with bundles, a worker starts from its bundle, and one without a bundle from its sources', () => {
  const bundle = pathToFileURL('/bundles/workers/normalize-worker.mjs').href;
  const bundles = { [entry.href]: bundle };
  assert.equal(workerUrl(entry, bundles).href, bundle);
  const other = pathToFileURL(join(ROOT, 'src/store/sqlite/checkpoint-worker.ts'));
  assert.equal(workerUrl(other, bundles).href, other.href);
});

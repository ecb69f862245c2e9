// The command's start-up loads Kysely from the bundles `npm install` made (src/cli/vendored.ts):
// they must be there, match the installed versions, and be what the command's own modules get.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { ResolveFnOutput } from 'node:module';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import {
  installedVersion,
  VENDOR_DIR,
  type VendorManifest,
  vendoredResolver,
  vendoredUrls,
} from '../../src/cli/vendored.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const MANIFEST = join(VENDOR_DIR, 'manifest.json');
// `npm install` makes the bundles whenever esbuild (a dev dependency) is there: then they must exist.
const esbuildInstalled = existsSync(join(ROOT, 'node_modules/esbuild/package.json'));
const absent = esbuildInstalled
  ? false
  : 'esbuild is not installed (no dev dependencies): no bundles to check';

test('every bundle exists and matches the installed version of its package', { skip: absent }, () => {
  assert.ok(existsSync(MANIFEST), `${MANIFEST} is missing: run \`npm install\` (its postinstall bundles)`);
  const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as VendorManifest;
  assert.deepEqual(Object.keys(manifest).sort(), ['kysely']);
  for (const [pkg, { version, entries }] of Object.entries(manifest)) {
    assert.equal(version, installedVersion(pkg), pkg);
    for (const file of Object.values(entries)) assert.ok(existsSync(join(VENDOR_DIR, file)), file);
  }
  assert.ok(vendoredUrls(manifest).has('kysely/migration'));
});

test('a bundle made for another version is not used', () => {
  const stale: VendorManifest = {
    kysely: { version: '0.0.1', entries: { kysely: 'kysely@0.0.1/index.js' } },
  };
  assert.equal(vendoredUrls(stale).size, 0);
});

test('only the project’s own imports go to a bundle', () => {
  const urls = new Map([['kysely', 'file:///bundle/kysely.js']]);
  const hook = vendoredResolver(urls);
  const next = (specifier: string): ResolveFnOutput => ({ url: `file:///node_modules/${specifier}` });
  const from = (parent: string) =>
    hook('kysely', { conditions: [], importAttributes: {}, parentURL: pathToFileURL(parent).href }, next).url;
  assert.equal(from(join(ROOT, 'src/store/connect.ts')), 'file:///bundle/kysely.js');
  assert.equal(from(join(ROOT, 'node_modules/other/index.js')), 'file:///node_modules/kysely');
  assert.equal(
    hook('kysely', { conditions: [], importAttributes: {}, parentURL: undefined }, next).url,
    'file:///node_modules/kysely',
  );
});

test('the command’s store modules load Kysely from its bundle', { skip: absent }, () => {
  // The same set-up as bin/chessport.js, then a later hook records what the store's `kysely` resolved to.
  const script = `
    import module from 'node:module';
    const { useVendoredBundles } = await import(${JSON.stringify(join(ROOT, 'src/cli/vendored.ts'))});
    useVendoredBundles();
    const seen = [];
    module.registerHooks({ resolve(specifier, context, next) {
      const out = next(specifier, context);
      if (specifier.startsWith('kysely')) seen.push(out.url);
      return out;
    } });
    await import(${JSON.stringify(join(ROOT, 'src/store/index.ts'))});
    console.log(JSON.stringify(seen));`;
  const seen = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script]).toString());
  assert.ok(seen.length > 0);
  for (const url of seen as string[]) assert.ok(url.startsWith(pathToFileURL(VENDOR_DIR).href), url);
});

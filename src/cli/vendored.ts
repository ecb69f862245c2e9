// The `chessport` command loads some dependencies from single-file bundles that `npm install` made
// (scripts/vendor-bundles.ts): Kysely's 304 module files took half of every command's start-up to load.
// Only imports from the project's own code are redirected, only to a bundle of the version installed; with
// no bundles (esbuild absent, or a Node.js without module.registerHooks) everything loads as usual.
import { readFileSync } from 'node:fs';
import module, { type ResolveHookSync } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');
export const VENDOR_DIR = join(ROOT, 'node_modules/.cache/chessport-vendor');
const OWN_CODE = [pathToFileURL(join(ROOT, 'src')).href, pathToFileURL(join(ROOT, 'bin')).href].map(
  (url) => `${url}/`,
);

/** Per bundled package: the version bundled, and each import specifier's bundle file (relative to VENDOR_DIR). */
export type VendorManifest = Record<string, { version: string; entries: Record<string, string> }>;

export function installedVersion(pkg: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
    return (manifest as { version?: string }).version;
  } catch {
    return undefined;
  }
}

/** Import specifier -> bundle URL, for the bundles that match the installed packages. */
export function vendoredUrls(manifest: VendorManifest): Map<string, string> {
  const urls = new Map<string, string>();
  for (const [pkg, { version, entries }] of Object.entries(manifest)) {
    if (installedVersion(pkg) !== version) continue; // made for another version: stale, not used
    for (const [specifier, file] of Object.entries(entries))
      urls.set(specifier, pathToFileURL(join(VENDOR_DIR, file)).href);
  }
  return urls;
}

/** A resolve hook that sends the project's own imports of bundled packages to their bundles. */
export function vendoredResolver(urls: Map<string, string>): ResolveHookSync {
  return (specifier, context, next) => {
    const url = urls.get(specifier);
    const fromOwnCode = OWN_CODE.some((dir) => context.parentURL?.startsWith(dir));
    return url && fromOwnCode ? { url, format: 'module', shortCircuit: true } : next(specifier, context);
  };
}

/** Registers the hook for this thread, when there are bundles to use. */
export function useVendoredBundles(): void {
  if (typeof module.registerHooks !== 'function') return; // Node.js before 22.15
  let manifest: VendorManifest;
  try {
    manifest = JSON.parse(readFileSync(join(VENDOR_DIR, 'manifest.json'), 'utf8')) as VendorManifest;
  } catch {
    return;
  }
  const urls = vendoredUrls(manifest);
  if (urls.size > 0) module.registerHooks({ resolve: vendoredResolver(urls) });
}

// The `chessport` command starts from a bundle of its own modules that the install (`npm ci`) made
// (scripts/vendor-bundles.ts), while every source file it was made from is unchanged; otherwise from the
// TypeScript sources. From its bundle a command loads a third as many modules and no TypeScript, and starts
// sooner (docs/performance.md). Plain JavaScript on purpose: the first TypeScript module a process loads
// makes Node load its type stripper. So the check below repeats fileHash (src/workers/bundle.ts) and
// installedVersion (src/cli/vendored.ts) rather than importing them.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
export const CLI_BUNDLE_DIR = join(ROOT, 'node_modules/.cache/chessport-cli');

/**
 * @typedef {object} CliBundleManifest
 * @property {string} bundle the entry file, in the bundle folder
 * @property {Record<string, string>} inputs SHA-256 of each source file of the project bundled (paths from the project root)
 * @property {Record<string, string>} packages version of each package bundled with them
 */

/**
 * The bundle's URL while it is fresh: each source file and package it was made from as it was then.
 * @param {string} [dir]
 * @returns {string | undefined}
 */
export function freshCliBundle(dir = CLI_BUNDLE_DIR) {
  try {
    /** @type {CliBundleManifest} */
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    for (const [file, hash] of Object.entries(manifest.inputs)) {
      if (
        createHash('sha256')
          .update(readFileSync(join(ROOT, file)))
          .digest('hex') !== hash
      )
        return undefined;
    }
    for (const [pkg, version] of Object.entries(manifest.packages)) {
      const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8'));
      if (installed.version !== version) return undefined;
    }
    return pathToFileURL(join(dir, manifest.bundle)).href;
  } catch {
    return undefined; // no bundle, or a file gone
  }
}

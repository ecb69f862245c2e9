// The `chessport` command starts from a bundle of its own modules that the install (`npm ci`) made
// (scripts/vendor-bundles.ts), while every source file and package it was made from is unchanged and the
// checkout is where it was made; otherwise from the TypeScript sources. The bundle loads a quarter as many
// modules and no TypeScript, and its worker threads start from bundles made with it (src/workers/bundle.ts):
// a command, and most of all its first run and a server's start, starts sooner (docs/performance.md).
// Plain JavaScript on purpose: the first TypeScript module a process loads makes Node load its type stripper.
// scripts/vendor-bundles.ts takes fileHash and installedVersion from here, so that the bundle's manifest and
// its check agree.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
/** The command's bundle, its worker threads' bundles (workers/) and their manifest. */
export const BUNDLE_DIR = join(ROOT, 'node_modules/.cache/chessport');

/**
 * @typedef {object} BundleManifest
 * @property {string} root the project's folder when the bundle was made: the bundle names files in it
 * @property {string} bundle the command's entry file, in the bundle folder
 * @property {Record<string, string>} inputs SHA-256 of each source file of the project bundled (paths from the project root)
 * @property {Record<string, string>} packages version of each package bundled with them
 */

/**
 * SHA-256 of a file's bytes, in hex.
 * @param {string} path
 * @returns {string}
 */
export function fileHash(path) {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/**
 * The version of the package `pkg` installed in the project, if any.
 * @param {string} pkg
 * @returns {string | undefined}
 */
export function installedVersion(pkg) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/**
 * The command bundle's URL while it is fresh: made in this folder, from each source file and package as they
 * are now.
 * @param {string} [dir]
 * @returns {string | undefined}
 */
export function freshCliBundle(dir = BUNDLE_DIR) {
  try {
    /** @type {BundleManifest} */
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    if (manifest.root !== ROOT) return undefined; // the checkout moved: the bundle names the old paths
    for (const [file, hash] of Object.entries(manifest.inputs)) {
      if (fileHash(join(ROOT, file)) !== hash) return undefined;
    }
    for (const [pkg, version] of Object.entries(manifest.packages)) {
      if (installedVersion(pkg) !== version) return undefined;
    }
    return pathToFileURL(join(dir, manifest.bundle)).href;
  } catch {
    return undefined; // no bundle, or a file gone
  }
}

// Worker threads (the import's normalising workers, the store's checkpoint thread) start from single-file
// JavaScript bundles that the install (`npm ci`) made (scripts/vendor-bundles.ts), not from their TypeScript
// sources.
//
// Why: each thread loads its modules in an isolate of its own, and a thread that loads TypeScript first loads
// and compiles Node's type stripper (amaro, a WebAssembly module) there; the compile cache does not spare it
// that, while a bundle is plain JavaScript (docs/performance.md). A bundle is used only while every file it
// was made from has the content it had then; otherwise, and without bundles (no esbuild at install), the
// thread starts from its sources.
// A leaf of its own, importing nothing of the project: both the store and the import start workers.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '../..');
export const WORKER_BUNDLE_DIR = join(ROOT, 'node_modules/.cache/chessport-workers');

/**
 * Per worker entry (its path from the project root): the bundle's file name in the bundle folder, and the
 * SHA-256 of each file it was made from (paths from the project root).
 */
export type WorkerBundleManifest = Record<string, { bundle: string; inputs: Record<string, string> }>;

export function fileHash(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Per entry and bundle folder, the URL chosen: checked once per thread. */
const chosen = new Map<string, URL>();

/** The URL to start the worker `entry` (a module of this project) from: its bundle while fresh, else itself. */
export function workerUrl(entry: URL, dir = WORKER_BUNDLE_DIR): URL {
  const key = `${entry.href} ${dir}`;
  let url = chosen.get(key);
  if (!url) {
    url = freshBundle(entry, dir) ?? entry;
    chosen.set(key, url);
  }
  return url;
}

function freshBundle(entry: URL, dir: string): URL | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as WorkerBundleManifest;
    const item = manifest[relative(ROOT, fileURLToPath(entry))];
    if (!item) return undefined;
    for (const [file, hash] of Object.entries(item.inputs)) {
      if (fileHash(join(ROOT, file)) !== hash) return undefined; // a source changed since the install
    }
    return pathToFileURL(join(dir, item.bundle));
  } catch {
    return undefined; // no bundles, or a file gone
  }
}

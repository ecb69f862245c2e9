// Run after `npm install` (postinstall): bundles the dependencies whose ES modules come as hundreds of small
// files into one file each, which bin/chessport.js loads in their place (src/cli/vendored.ts), and each
// worker thread's code into one JavaScript file, which it starts from (src/store/worker-bundle.ts).
//
// Why: Node resolves, reads and links every module file of a package on each start, and the compile cache
// does not help with that. Kysely is 304 files: loading it took 80 ms of the 160 ms a CLI command needed
// before doing anything, and each import pays it; bundled it loads in about 6 ms (measured).
//
// Each package is bundled with all its exported entry points in one esbuild run, so that they share one copy
// of the package's modules (Kysely's `kysely` and `kysely/migration` both need the same classes). Without
// esbuild (a production install without dev dependencies) nothing is bundled and the packages load as usual.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { installedVersion, VENDOR_DIR, type VendorManifest } from '../src/cli/vendored.ts';
import { fileHash, WORKER_BUNDLE_DIR, type WorkerBundleManifest } from '../src/store/worker-bundle.ts';

const ROOT = resolve(import.meta.dirname, '..');
// Packages of many ES module files that every command loads. (chessops, 27 files, loads in ~10 ms; commander
// is one CommonJS file.)
const PACKAGES = ['kysely'];
// Worker entries, with the packages left out of their bundle: better-sqlite3 loads a native addon.
const WORKERS: { entry: string; external: string[] }[] = [
  { entry: 'src/import/normalize-worker.ts', external: [] },
  { entry: 'src/store/sqlite-checkpoint-worker.ts', external: ['better-sqlite3'] },
];

/** The package's import specifiers: every entry of its exports map but wildcards and JSON files. */
function specifiersOf(pkg: string): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
    exports?: Record<string, unknown>;
  };
  const keys = Object.keys(manifest.exports ?? { '.': null });
  return keys.filter((k) => !k.includes('*') && !k.endsWith('.json')).map((k) => join(pkg, k));
}

async function main(): Promise<void> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    process.stderr.write('chessport: esbuild is not installed; dependencies load unbundled (slower start)\n');
    return;
  }
  rmSync(VENDOR_DIR, { recursive: true, force: true });
  const manifest: VendorManifest = {};
  for (const pkg of PACKAGES) {
    const version = installedVersion(pkg);
    if (version === undefined) throw new Error(`${pkg} is not installed`);
    const outdir = join(VENDOR_DIR, `${pkg}@${version}`);
    const entryPoints: Record<string, string> = {};
    const entries: Record<string, string> = {};
    for (const specifier of specifiersOf(pkg)) {
      // Resolved as Node would from the project, with the conditions of an ES module import.
      const file = fileURLToPath(
        import.meta.resolve(specifier, pathToFileURL(join(ROOT, 'package.json')).href),
      );
      const name = specifier === pkg ? 'index' : relative(pkg, specifier);
      entryPoints[name] = file;
      entries[specifier] = relative(VENDOR_DIR, join(outdir, `${name}.js`));
    }
    await esbuild.build({
      entryPoints,
      outdir,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      logLevel: 'warning',
    });
    manifest[pkg] = { version, entries };
  }
  mkdirSync(VENDOR_DIR, { recursive: true });
  writeFileSync(join(VENDOR_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  await bundleWorkers(esbuild);
}

/** Each worker's code in one ES module (.mjs: no package.json above it says "module"), and what it holds. */
async function bundleWorkers(esbuild: typeof import('esbuild')): Promise<void> {
  rmSync(WORKER_BUNDLE_DIR, { recursive: true, force: true });
  const manifest: WorkerBundleManifest = {};
  for (const { entry, external } of WORKERS) {
    const bundle = basename(entry).replace(/\.ts$/, '.mjs');
    const result = await esbuild.build({
      entryPoints: [join(ROOT, entry)],
      outfile: join(WORKER_BUNDLE_DIR, bundle),
      absWorkingDir: ROOT, // the metafile's input paths are then relative to the project
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external,
      metafile: true,
      logLevel: 'warning',
    });
    const inputs: Record<string, string> = {};
    for (const file of Object.keys(result.metafile.inputs)) inputs[file] = fileHash(join(ROOT, file));
    manifest[entry] = { bundle, inputs };
  }
  writeFileSync(join(WORKER_BUNDLE_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

await main();

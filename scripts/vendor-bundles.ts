// Run after the install (`npm ci`, or `npm install`: postinstall): bundles the dependencies whose ES modules
// come as hundreds of small files into one file each, which bin/chessport.js loads in their place
// (src/cli/vendored.ts), each worker thread's code into one JavaScript file, which it starts from
// (src/workers/bundle.ts), and the command's own modules, which bin/chessport.js starts from
// (bin/cli-bundle.js).
//
// Why: Node resolves, reads and links every module file of a package on each start, and the compile cache
// does not help with that. Kysely is 304 files: loading them is half of what a CLI command does before it
// starts on its work, and each import pays it; bundled, it loads in a fraction of that (docs/performance.md).
//
// Each package is bundled with all its exported entry points in one esbuild run, so that they share one copy
// of the package's modules (Kysely's `kysely` and `kysely/migration` both need the same classes). Without
// esbuild (a production install without dev dependencies) nothing is bundled and the packages load as usual.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Plugin } from 'esbuild';
import { CLI_BUNDLE_DIR, type CliBundleManifest } from '../bin/cli-bundle.js';
import { installedVersion, VENDOR_DIR, type VendorManifest } from '../src/cli/vendored.ts';
import { SOURCE_CONDITION } from '../src/cli/workspace-sources.ts';
import { fileHash, WORKER_BUNDLE_DIR, type WorkerBundleManifest } from '../src/workers/bundle.ts';

const ROOT = resolve(import.meta.dirname, '..');
// Packages of many ES module files that every command loads. (chessops, 27 files, loads quickly enough as it
// is: docs/performance.md; commander is one CommonJS file.)
const PACKAGES = ['kysely'];
// Worker entries, with the packages left out of their bundle: better-sqlite3 loads a native addon.
const WORKERS: { entry: string; external: string[] }[] = [
  { entry: 'src/import/normalize-worker.ts', external: [] },
  { entry: 'src/store/sqlite/checkpoint-worker.ts', external: ['better-sqlite3'] },
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
  await bundleCli(esbuild);
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

/**
 * The project's modules refer to files next to them through import.meta (the import's workers, the demo's
 * games, the project root): in a bundle, import.meta is the bundle's. Each source file gets its own values
 * written in instead.
 */
const ownImportMeta: Plugin = {
  name: 'own-import-meta',
  setup(build) {
    build.onLoad({ filter: /\/src\/.*\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path))),
      loader: 'ts',
    }));
  },
};

/**
 * Packages bundled into the command with its own modules: every command loads them (Kysely: 304 files); and
 * the workspace packages, which are the project's own modules, bundled from their sources (SOURCE_CONDITION).
 */
const CLI_INLINE = ['kysely', 'commander', 'chessops', '@chessport/client', '@chessport/sync'];

/**
 * The `chessport` command's own modules in one bundle (bin/cli-bundle.js), with the packages every command
 * needs; what it imports only for some commands (the server, the import) in chunks loaded when asked for, and
 * the other packages left to Node (better-sqlite3 loads a native addon, Fastify's plugins read files beside
 * them).
 */
async function bundleCli(esbuild: typeof import('esbuild')): Promise<void> {
  rmSync(CLI_BUNDLE_DIR, { recursive: true, force: true });
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const result = await esbuild.build({
    entryPoints: { main: join(ROOT, 'src/cli/main.ts') },
    outdir: CLI_BUNDLE_DIR,
    outExtension: { '.js': '.mjs' }, // no package.json above the folder says "module"
    absWorkingDir: ROOT,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: Object.keys(pkg.dependencies).filter((name) => !CLI_INLINE.includes(name)),
    conditions: [SOURCE_CONDITION],
    plugins: [ownImportMeta],
    metafile: true,
    logLevel: 'warning',
  });
  const inputs: Record<string, string> = {};
  const packages: Record<string, string> = {};
  for (const file of Object.keys(result.metafile.inputs)) {
    const inPackage = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (!inPackage) inputs[file] = fileHash(join(ROOT, file));
    else packages[inPackage[1] as string] = installedVersion(inPackage[1] as string) ?? '';
  }
  const manifest: CliBundleManifest = { bundle: 'main.mjs', inputs, packages };
  writeFileSync(join(CLI_BUNDLE_DIR, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
}

await main();

// Run after the install (`npm ci`, or `npm install`: postinstall) and before the benches (`prebench`): bundles
// the `chessport` command's own modules, which bin/chessport.js starts from while they are unchanged
// (bin/cli-bundle.js), and each worker thread's code into one JavaScript file, which the command's worker
// threads start from (src/workers/bundle.ts).
//
// Why: Node resolves, reads and links every module file on each start, and strips the types of every
// TypeScript file that its compile cache does not hold yet, in each thread anew: a command, a server and an
// import's workers start sooner from a few files of plain JavaScript (docs/performance.md).
// Without esbuild (an install without dev dependencies) nothing is bundled and everything loads from its
// sources.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Metafile, Plugin } from 'esbuild';
import { BUNDLE_DIR, type BundleManifest, fileHash, installedVersion } from '../bin/cli-bundle.js';
import { SOURCE_CONDITION } from '../src/cli/workspace-sources.ts';

const ROOT = resolve(import.meta.dirname, '..');
// Worker entries, with the packages left out of their bundle: better-sqlite3 loads a native addon.
const WORKERS: { entry: string; external: string[] }[] = [
  { entry: 'src/import/normalize-worker.ts', external: [] },
  { entry: 'src/store/sqlite/checkpoint-worker.ts', external: ['better-sqlite3'] },
  { entry: 'packages/sync/src/takeover-worker.ts', external: ['better-sqlite3'] },
];
/**
 * Packages bundled into the command with its own modules: every command loads them (Kysely: 304 files); and
 * the workspace packages, which are the project's own modules, bundled from their sources (SOURCE_CONDITION).
 */
const CLI_INLINE = ['kysely', 'commander', 'chessops', '@chessport/client', '@chessport/sync'];

/**
 * Makes the command's bundle and its workers' in `dir` (anew), with their manifest. False, and nothing made,
 * without esbuild.
 */
export async function makeBundles(dir = BUNDLE_DIR): Promise<boolean> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return false;
  }
  rmSync(dir, { recursive: true, force: true });
  const manifest: BundleManifest = { root: ROOT, bundle: 'main.mjs', inputs: {}, packages: {} };
  const workerBundles: Record<string, string> = {};
  for (const { entry, external } of WORKERS) {
    // .mjs: no package.json above the folder says "module".
    const outfile = join(dir, 'workers', basename(entry).replace(/\.ts$/, '.mjs'));
    const result = await esbuild.build({
      entryPoints: [join(ROOT, entry)],
      outfile,
      absWorkingDir: ROOT, // the metafile's input paths are then relative to the project
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      external,
      metafile: true,
      logLevel: 'warning',
    });
    record(manifest, result.metafile);
    workerBundles[pathToFileURL(join(ROOT, entry)).href] = pathToFileURL(outfile).href;
  }
  await bundleCli(esbuild, dir, manifest, workerBundles);
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return true;
}

/** Adds what a bundle was made from: the project's files by their hash, packages by their version. */
function record(manifest: BundleManifest, metafile: Metafile): void {
  for (const file of Object.keys(metafile.inputs)) {
    const inPackage = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
    if (!inPackage) manifest.inputs[file] = fileHash(join(ROOT, file));
    else manifest.packages[inPackage[1] as string] = installedVersion(inPackage[1] as string) ?? '';
  }
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
 * The `chessport` command's own modules in one bundle, with the packages every command needs; what it
 * imports only for some commands (the server, the import) in chunks loaded when asked for, and the other
 * packages left to Node (better-sqlite3 loads a native addon, Fastify's plugins read files beside them). Its
 * workers start from their bundles (`workerBundles`: src/workers/bundle.ts).
 */
async function bundleCli(
  esbuild: typeof import('esbuild'),
  dir: string,
  manifest: BundleManifest,
  workerBundles: Record<string, string>,
): Promise<void> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const result = await esbuild.build({
    entryPoints: { main: join(ROOT, 'src/cli/main.ts') },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    absWorkingDir: ROOT,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    external: Object.keys(pkg.dependencies).filter((name) => !CLI_INLINE.includes(name)),
    conditions: [SOURCE_CONDITION],
    define: { CHESSPORT_WORKER_BUNDLES: JSON.stringify(JSON.stringify(workerBundles)) },
    plugins: [ownImportMeta],
    metafile: true,
    logLevel: 'warning',
  });
  record(manifest, result.metafile);
}

if (process.argv[1] === fileURLToPath(import.meta.url) && !(await makeBundles())) {
  process.stderr.write('chessport: esbuild is not installed; the command starts from its sources (slower)\n');
}

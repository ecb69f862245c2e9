#!/usr/bin/env node
// Entry point of the `chessport` command. Node >= 22.18 runs the TypeScript sources directly.
// Node's compile cache keeps the type-stripped and compiled modules on disk (in os.tmpdir() unless
// NODE_COMPILE_CACHE names a folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): from the second run on, a
// command starts in about a third of the CPU time. The variable hands the cache on to the import's workers.
// The command's modules load from one bundle while it is fresh (cli-bundle.js), else from the sources.
import module from 'node:module';
import { freshCliBundle } from './cli-bundle.js';

const cache = module.enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
const bundle = freshCliBundle();
if (bundle) await import(bundle);
else {
  const { useVendoredBundles } = await import('../src/cli/vendored.ts');
  useVendoredBundles();
  await import('../src/cli/main.ts');
}

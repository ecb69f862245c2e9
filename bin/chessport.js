#!/usr/bin/env node
// Entry point of the `chessport` command. Node >= 22.18 runs the TypeScript sources directly.
// Node's compile cache keeps the type-stripped and compiled modules on disk (in os.tmpdir() unless
// NODE_COMPILE_CACHE names a folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): from the second run on, a
// command starts in about a third of the CPU time. The variable hands the cache on to the import's workers.
// The command's modules load from one bundle while it is fresh (cli-bundle.js), else from the sources.
import module from 'node:module';
import { sep } from 'node:path';
import { freshCliBundle } from './cli-bundle.js';

const cache = module.enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
const bundle = freshCliBundle();
// Installed as a dependency (for chessport/client) or globally, the command is under node_modules, where
// Node.js strips no types: the sources failed to load with a stack trace (ERR_UNSUPPORTED_NODE_MODULES_TYPE_
// STRIPPING). The command runs from a checkout of the project; say so in one line.
if (import.meta.dirname.split(sep).includes('node_modules')) {
  process.stderr.write(
    'chessport: the command runs from a checkout of the project (git clone, then npm install), not from ' +
      'node_modules, where Node.js strips no TypeScript types; as a dependency, the package gives chessport/client\n',
  );
  process.exit(1);
}
if (bundle) await import(bundle);
else {
  const { useVendoredBundles } = await import('../src/cli/vendored.ts');
  useVendoredBundles();
  await import('../src/cli/main.ts');
}

#!/usr/bin/env node
// Entry point of the `chessport` command. Node >= 22.18 runs the TypeScript sources directly.
// Node's compile cache keeps the type-stripped and compiled modules on disk (in os.tmpdir() unless
// NODE_COMPILE_CACHE names a folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off): from the second run on, a
// command starts with far less CPU time (docs/performance.md). The variable hands the cache on to the import's
// workers.
// The command's modules load from one bundle while it is fresh (cli-bundle.js), else from the sources.
import module from 'node:module';
import { sep } from 'node:path';

// Node.js 22.18 is the first to strip types without a flag. An older one (Debian's node 20, say) would fail
// with a stack trace from inside the bundle or the sources; say so in one line before anything else loads.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `chessport: needs Node.js 22.18 or later, and this is ${process.versions.node}: put a newer node first on ` +
      'PATH (bash scripts/demo.sh installs Node.js 24 into .tools/ and runs the demo with it)\n',
  );
  process.exit(1);
}
const { freshCliBundle } = await import('./cli-bundle.js');
const cache = module.enableCompileCache?.();
if (cache?.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
const bundle = freshCliBundle();
// Installed as a dependency or globally, the command is under node_modules, where Node.js strips no types:
// the sources would fail to load with a stack trace (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING). The
// command runs from a checkout of the project; say so in one line.
if (import.meta.dirname.split(sep).includes('node_modules')) {
  process.stderr.write(
    'chessport: the command runs from a checkout of the project (git clone, then npm ci), not from ' +
      'node_modules, where Node.js strips no TypeScript types; for the client, install @chessport/client\n',
  );
  process.exit(1);
}
if (bundle) await import(bundle);
else {
  // The workspace packages (@chessport/sync, @chessport/client) from their sources too, not from a build.
  const { useWorkspaceSources } = await import('../src/cli/workspace-sources.ts');
  useWorkspaceSources();
  await import('../src/cli/main.ts');
}

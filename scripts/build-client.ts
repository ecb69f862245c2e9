// `prepare` (run by `npm ci` and `npm install` in the project, by `npm pack`, and by npm when it installs the
// project from git): compiles chessport/client, that is src/client (the sync engine, src/sync, is not part of
// it), to JavaScript and type declarations in dist/client, where the package's "./client" export points.
// Node.js does not strip types in node_modules, so an installed package must ship JavaScript; the project
// itself keeps running and testing the sources. tsc does the work (src/client/tsconfig.build.json); this
// script empties the folder first, so that a renamed module leaves no stale file to be packed, and without
// TypeScript (an install without dev dependencies) it skips, as vendor-bundles.ts does without esbuild, unless
// packing.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist/client');
const CONFIG = join(ROOT, 'src/client/tsconfig.build.json');

function tscPath(): string | undefined {
  let manifest: string;
  try {
    manifest = fileURLToPath(import.meta.resolve('typescript/package.json'));
  } catch {
    return undefined;
  }
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: { tsc: string } };
  return join(dirname(manifest), bin.tsc);
}

const tsc = tscPath();
if (tsc === undefined) {
  // A package without dist/client would be useless: packing fails instead.
  const packing = ['pack', 'publish'].includes(process.env.npm_command ?? '');
  process.stderr.write(
    'chessport: TypeScript is not installed, so chessport/client is not built (dist/client)\n',
  );
  process.exit(packing ? 1 : 0);
}
rmSync(OUT, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', CONFIG], { stdio: 'inherit' });

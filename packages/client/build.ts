// `prepare` of @chessport/client (run by `npm install` in the project, which installs the workspace, and by
// `npm pack`): compiles src/ to JavaScript and type declarations in dist/, where the package's exports point.
// Node.js strips no types in node_modules, so the installed package ships JavaScript; the project itself
// runs and tests the sources. tsc does the work (tsconfig.build.json: DOM types, no Node.js ones, as in a
// browser). This script empties dist/ first, so that a renamed module leaves no stale file to be packed, and
// without TypeScript (an install without dev dependencies) it skips, as scripts/vendor-bundles.ts does
// without esbuild, unless packing.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = import.meta.dirname;
const OUT = join(PACKAGE, 'dist');
const CONFIG = join(PACKAGE, 'tsconfig.build.json');

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
  // A package without dist/ would be useless: packing fails instead.
  const packing = ['pack', 'publish'].includes(process.env.npm_command ?? '');
  process.stderr.write('@chessport/client: TypeScript is not installed, so dist/ is not built\n');
  process.exit(packing ? 1 : 0);
}
rmSync(OUT, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', CONFIG], { stdio: 'inherit' });

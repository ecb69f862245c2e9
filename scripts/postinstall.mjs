// `postinstall`: bundles the command and its worker threads (vendor-bundles.ts), so that they start fast.
// JavaScript, not TypeScript, so that it also runs where Node.js strips no types: in a project that installs
// chessport as a dependency, where the commands do not run from node_modules anyway
// and there is nothing to bundle, and on a Node.js older than 22.18.
import { spawnSync } from 'node:child_process';
import { join, sep } from 'node:path';

if (import.meta.dirname.split(sep).includes('node_modules')) process.exit(0);
const bundled = spawnSync(process.execPath, [join(import.meta.dirname, 'vendor-bundles.ts')], {
  stdio: 'inherit',
});
if (bundled.status !== 0)
  console.log(
    'chessport: the command is not bundled (Node.js >= 22.18 runs scripts/vendor-bundles.ts); commands start slower',
  );

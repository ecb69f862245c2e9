// The static checks of `npm test`, side by side: `npm run lint` (Biome: format and lint), `typecheck` (tsc) and
// `layers` (dependency-cruiser). They read the tree and write nothing, so they run at once: on two cores the
// three take about the time of tsc alone. Each one's output is printed whole, in this order, once all have
// ended; the exit status fails if any failed.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');

/** package.json's scripts, so that each check runs alone as it runs here. */
const CHECKS = ['lint', 'typecheck', 'layers'];

function check(script: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn('npm', ['run', '--silent', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', (error) => done({ code: null, output: `${output}${error.message}\n` }));
    child.on('close', (code) => done({ code, output }));
  });
}

const results = await Promise.all(CHECKS.map(check));
let failed = 0;
for (const [i, { code, output }] of results.entries()) {
  process.stdout.write(output);
  if (code !== 0) {
    failed++;
    process.stderr.write(`# npm run ${CHECKS[i]} failed (exit ${code})\n`);
  }
}
process.exitCode = failed > 0 ? 1 : 0;

// @chessport/client as an integrator gets it: `npm pack` of packages/client (its prepack builds dist/), and the
// tarball installed into a fresh project with `npm install`, offline (the client has no dependency to fetch).
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './harness.ts';

const run = promisify(execFile);

export const CLIENT_PACKAGE = join(ROOT, 'packages/client');

/** Packs the client into `dir`: the tarball's path and the files npm put into it. */
export async function packClient(dir: string): Promise<{ tarball: string; files: string[] }> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: CLIENT_PACKAGE,
    maxBuffer: 16 << 20,
  });
  const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
  return { tarball: join(dir, packed.filename), files: packed.files.map((file) => file.path) };
}

/** A fresh ES-module project in `app` with the tarball installed; what npm printed. */
export async function installClient(app: string, tarball: string): Promise<string> {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  const { stdout, stderr } = await run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], {
    cwd: app,
  });
  return `${stdout}${stderr}`;
}

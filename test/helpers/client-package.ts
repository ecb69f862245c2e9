// @chessport/client as an integrator gets it: `npm pack` of packages/client (its prepack builds dist/), and the
// tarball installed into a fresh project with `npm install`, offline (the client has no dependency to fetch).
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './harness.ts';

const run = promisify(execFile);

export const CLIENT_PACKAGE = join(ROOT, 'packages/client');

// `npm pack` runs the client's prepack, which empties and rebuilds dist/. Packing packages/client itself would
// take dist/ away from every other suite of the run that loads the built client (the CLI binary's sync does)
// while tsc writes it again, so the pack runs on a copy of the package's sources in the test's folder, with a
// link to the project's node_modules where its build script finds TypeScript (npm never packs node_modules).
const PACKAGE_FILES = ['package.json', 'README.md', 'LICENSE', 'build.ts', 'tsconfig.build.json', 'src'];

/** Packs the client into `dir`: the tarball's path and the files npm put into it. */
export async function packClient(dir: string): Promise<{ tarball: string; files: string[] }> {
  const copy = join(dir, `client-${randomUUID()}`);
  mkdirSync(copy, { recursive: true });
  try {
    for (const file of PACKAGE_FILES)
      cpSync(join(CLIENT_PACKAGE, file), join(copy, file), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: copy,
      maxBuffer: 16 << 20,
    });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    if (!packed) throw new Error(`npm pack printed no package: ${stdout}`);
    return { tarball: join(dir, packed.filename), files: packed.files.map((file) => file.path) };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
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

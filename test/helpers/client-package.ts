// @chessport/client as an integrator gets it: `npm pack` of packages/client (its prepack builds dist/), and the
// tarball installed into a fresh project with `npm install`, offline (the client has no dependency to fetch).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { ROOT } from './harness.ts';

const run = promisify(execFile);

export const CLIENT_PACKAGE = join(ROOT, 'packages/client');

// `npm pack` runs the client's prepack, which empties and rebuilds packages/client/dist: two packs at once (two
// suites of one test run) would pack each other's half-built dist. They take turns through a lock folder,
// made atomically by mkdir; one left by a killed run is taken over after a few minutes.
const PACK_LOCK = join(
  tmpdir(),
  `chessport-client-pack-${createHash('sha256').update(CLIENT_PACKAGE).digest('hex').slice(0, 12)}`,
);
const STALE_LOCK_MS = 5 * 60_000;

async function takingTurns<T>(fn: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      mkdirSync(PACK_LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(PACK_LOCK).mtimeMs > STALE_LOCK_MS)
          rmSync(PACK_LOCK, { recursive: true, force: true });
      } catch {
        // Released meanwhile: try again.
      }
      await sleep(100);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(PACK_LOCK, { recursive: true, force: true });
  }
}

/** Packs the client into `dir`: the tarball's path and the files npm put into it. */
export async function packClient(dir: string): Promise<{ tarball: string; files: string[] }> {
  const { stdout } = await takingTurns(() =>
    run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: CLIENT_PACKAGE,
      maxBuffer: 16 << 20,
    }),
  );
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

// Games/s of the chess layer: split + normalize (parse, legality, SAN/UCI, FEN, export PGN),
// one thread. Usage: node bench/chess.ts [file.pgn ...]
// Default: TWIC #920 and, if present, the 100 MB pgnmentor file. Files under 10 MB are
// timed 5 times after a warm-up and the median is printed; larger ones once.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { normalizeGame, PgnSplitter } from '../src/chess/index.ts';
import { CORPUS } from '../test/helpers/corpus.ts';

const corpus = join(CORPUS, 'large');
const files =
  process.argv.length > 2
    ? process.argv.slice(2)
    : [join(corpus, 'notnil_chess__twic0920.pgn'), join(corpus, 'pgnmentor_players_A-J.pgn')].filter((f) =>
        existsSync(f),
      );
if (files.length === 0) {
  console.error(`no input: pass PGN files, or provide the corpus at ${corpus}`);
  process.exit(1);
}

interface Run {
  games: number;
  ok: number;
  splitMs: number;
  wallMs: number;
  /** CPU time of this thread only: steadier than wall clock when other processes share the cores. */
  cpuMs: number;
}

function run(text: string): Run {
  const cpu0 = process.threadCpuUsage();
  const t0 = performance.now();
  const splitter = new PgnSplitter();
  const raws = [...splitter.push(text), ...splitter.end()];
  const t1 = performance.now();
  let ok = 0;
  for (const raw of raws) if (normalizeGame(raw.text).ok) ok++;
  const cpu = process.threadCpuUsage(cpu0);
  return {
    games: raws.length,
    ok,
    splitMs: t1 - t0,
    wallMs: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

for (const file of files) {
  // latin1 decoding keeps every byte; good enough for timing.
  const text = new TextDecoder('latin1').decode(readFileSync(file));
  const small = text.length < 10_000_000;
  run(text.slice(0, 2_000_000)); // warm-up
  const runs = Array.from({ length: small ? 5 : 1 }, () => run(text));
  const r = runs[0] as Run;
  const wall = median(runs.map((x) => x.wallMs)) / 1000;
  const cpu = median(runs.map((x) => x.cpuMs)) / 1000;
  console.log(
    `${file.split('/').at(-1)}: ${r.games} games (${r.ok} ok), ${(text.length / 1e6).toFixed(1)} MB; ` +
      `${runs.length > 1 ? 'median of 5: ' : ''}${wall.toFixed(2)} s wall = ${Math.round(r.games / wall)} games/s, ` +
      `${Math.round(r.games / cpu)} games per CPU second (split alone ${Math.round(median(runs.map((x) => x.splitMs)))} ms)`,
  );
}

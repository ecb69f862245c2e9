// One cold pass of the chess layer over a file, in a process of its own, as the import's first pass is: read,
// split, then parse, check and write every game (normalizeGame). Prints the process's CPU time for it (all
// threads: V8's compiler and collector threads too) as JSON. bench/import.ts sets it against pgn-extract's
// whole run: the checking alone, spread over every core with nothing else to do, bounds the import's ratio.
// Usage: node bench/check-alone.ts file.pgn
import { readFileSync } from 'node:fs';
import { normalizeGame, splitPgn } from '../src/chess/index.ts';

const file = process.argv[2];
if (!file) throw new Error('usage: node bench/check-alone.ts file.pgn');
const before = process.cpuUsage();
const started = performance.now();
let ok = 0;
// latin1 keeps every byte, and the benchmark files are ASCII but for a few bytes: the same games either way.
const games = splitPgn(readFileSync(file, 'latin1'));
for (const game of games) if (normalizeGame(game.text, game.line).ok) ok++;
const cpu = process.cpuUsage(before);
console.log(
  JSON.stringify({
    games: games.length,
    ok,
    cpu: (cpu.user + cpu.system) / 1e6,
    seconds: (performance.now() - started) / 1000,
  }),
);

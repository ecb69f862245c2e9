// Mutation fuzzing of the PGN import. Real games (test/fixtures, and the PGN corpus's files up to 200 KB when
// it is there) are mutated from a fixed seed (fuzz-inputs.ts): bit flips, special bytes, deleted and duplicated
// ranges, truncation inside a tag, comment, variation, move, number or NAG, stray '{', '}', '(', ')', ';' and
// '%' at line starts, tag lines in movetext, NULs, lone CRs, invalid UTF-8 and overlong sequences, BOMs
// mid-file, odd characters in comments, tags and movetext, moves written other ways, FEN tags, tag pairs broken
// over lines, added comments, NAGs and variations, huge move numbers, 10,000 NAGs, 10,000 nested variations,
// empty games, splices of two games, stacks of several of these ("havoc"); and, more rarely, inputs of
// megabytes: 1 MB lines, the reader's 1 MB seams on a line end or a character, 600,000 warnings, 30,000 games,
// no line end.
//
// Each input is imported with importFile into a new database of a real store, every other one on a worker
// thread, every tenth into a database of a few games at most. fuzz-check.ts then checks that the import did not
// throw; that reading the file in other pieces cuts the same games; that no text is lost between games; that
// the counts add up and each game is imported, a duplicate or rejected as checking it alone says, with its
// line and reason; that reasons and warnings are well-formed text whose line numbers name the line of what
// they quote; that the rejects file holds exactly the rejected games as read; that the store holds the kept
// games; and that their export reads back to the same games, also as one file imported again. In the longer
// runs below, an import slower than the unmutated seeds by 100 times per byte (beyond a fixed allowance) is a
// finding too: a measure of speed, which `npm test` leaves to the bench, as a busy machine would fail it.
//
// `npm test` runs INPUTS inputs of seed 1, a heavy one in HEAVY_EVERY, without the largest sizes (a few
// seconds). Longer runs, with a heavy input in 8, every size and the time of each import checked:
//   CHESSPORT_FUZZ_INPUTS=5000 node --test test/import/fuzz.test.ts   5,000 inputs (about 5 minutes on 2 cores)
//   CHESSPORT_FUZZ_SEED=7 ...                                         another seed (default 1)
//   CHESSPORT_FUZZ_ONLY=123 ...                                       only input 123 (with the same other settings)
//   CHESSPORT_FUZZ_KEEP=/some/folder ...                              writes each input with a finding there
//   CHESSPORT_FUZZ_CORPUS=/path/to/pgn ...                            seeds from another folder than the corpus
// A finding names the settings that reproduce it. A long run also counts the inputs whose rejects file, read
// again, is cut into other games than were rejected (see fuzz-check.ts: not a failure).
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { NormalizePool } from '../../src/import/normalize-pool.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { type Env, tempEnv } from '../helpers/harness.ts';
import { FuzzChecker } from '../helpers/import-fuzz-check.ts';
import { kindOf, loadSeeds, makeInput, Rng } from '../helpers/import-fuzz-inputs.ts';

const INPUTS = 300;
const long = process.env.CHESSPORT_FUZZ_INPUTS !== undefined;
const count = long ? Number(process.env.CHESSPORT_FUZZ_INPUTS) : INPUTS;
/** One input in so many is of a heavy kind (megabytes). */
const HEAVY_EVERY = long ? 8 : 60;
const seed = Number(process.env.CHESSPORT_FUZZ_SEED ?? 1);
const only =
  process.env.CHESSPORT_FUZZ_ONLY === undefined ? undefined : Number(process.env.CHESSPORT_FUZZ_ONLY);
const keep = process.env.CHESSPORT_FUZZ_KEEP;
/** Slower than the seeds by this factor per byte, beyond a fixed allowance, is a finding. */
const SLOWDOWN = 100;
const ALLOWANCE_MS = 250;

const { seeds, corpus } = loadSeeds();
const settings = [
  long && `CHESSPORT_FUZZ_INPUTS=${count}`,
  `CHESSPORT_FUZZ_SEED=${seed}`,
  process.env.CHESSPORT_FUZZ_CORPUS && `CHESSPORT_FUZZ_CORPUS=${process.env.CHESSPORT_FUZZ_CORPUS}`,
]
  .filter(Boolean)
  .join(' ');

let env: Env;
let store: Store;
let pool: NormalizePool;
let checker: FuzzChecker;
/** Import time per byte of the unmutated seeds. */
let msPerByte = 0;
const findings: string[] = [];

before(async () => {
  env = tempEnv();
  store = await openStore(env.databaseUrl);
  const owner = await store.accounts.addUser({ login: 'fuzz' });
  checker = new FuzzChecker(store, owner.id, env.dir);
  pool = new NormalizePool(1);
  // The baseline: the seeds themselves, checked too; timed in the longer runs, twice (the first run warms the
  // code up).
  const all = Buffer.concat(seeds.map((s) => s.bytes));
  for (let k = 0; k < (long ? 2 : 1); k++) {
    const checked = await checker.check(all, new Rng(0), undefined);
    msPerByte = checked.ms / all.length;
    if (k === 0)
      for (const f of checked.findings) findings.push(`the seeds, unmutated\n  ${f.check}: ${f.message}`);
  }
});
after(async () => {
  await pool?.close();
  await store?.close();
  env?.cleanup();
});

const what = `${count} inputs of seed ${seed} from ${seeds.length} files${corpus ? '' : ' (fixtures only: the PGN corpus is absent)'}`;

test(`fuzzing the import: ${what}`, async () => {
  const kinds = new Map<string, number>();
  for (let n = 0; n < count; n++) {
    if (only !== undefined && n !== only) continue;
    const input = makeInput(seeds, seed, n, kindOf(n, HEAVY_EVERY), long);
    kinds.set(input.kind, (kinds.get(input.kind) ?? 0) + 1);
    const onWorker = n % 2 === 1;
    // Every tenth input goes to a database of a few games at most: the import stops at the limit.
    const maxGames = n % 10 === 7 ? 1 + (n % 4) : undefined;
    const checked = await checker.check(
      input.bytes,
      new Rng(seed + n),
      onWorker ? pool : undefined,
      maxGames,
    );
    const found = checked.findings;
    const limit = ALLOWANCE_MS + SLOWDOWN * msPerByte * input.bytes.length;
    // Over the limit once may be the machine: only an input slow twice in a row is a finding.
    const ms =
      long && checked.ms > limit && found.length === 0
        ? Math.min(
            checked.ms,
            (await checker.check(input.bytes, new Rng(seed + n), onWorker ? pool : undefined, maxGames)).ms,
          )
        : checked.ms;
    if (long && ms > limit)
      found.push({
        check: 'bounded time',
        message: `${Math.round(ms)} ms for ${input.bytes.length} bytes (limit ${Math.round(limit)} ms)`,
      });
    if (found.length === 0) continue;
    if (onWorker && found.some((f) => f.check === 'no exception')) {
      // The import failed on its worker: a pool whose worker died takes no more batches.
      await pool.close();
      pool = new NormalizePool(1);
    }
    const where =
      `${settings} CHESSPORT_FUZZ_ONLY=${n}: ${input.kind} (${input.detail}); ${input.bytes.length} bytes, ` +
      `${onWorker ? 'on a worker' : 'inline'}${maxGames ? `, maxGames ${maxGames}` : ''}`;
    for (const f of found) findings.push(`${where}\n  ${f.check}: ${f.message}`);
    if (keep) {
      mkdirSync(keep, { recursive: true });
      writeFileSync(join(keep, `fuzz-${seed}-${n}.pgn`), input.bytes);
    }
  }
  if (long) {
    console.log([...kinds].map(([k, v]) => `${k}: ${v}`).join(', '));
    console.log(`inputs whose rejects file, read again, is cut into other games: ${checker.recut}`);
  }
  assert.deepEqual(findings, [], `${findings.length} findings:\n${findings.join('\n')}`);
});

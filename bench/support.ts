// What the benches share: a sample of real game records, and a free local port for a server under test.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { normalizeGame, PgnSplitter } from '../src/chess/index.ts';
import { toGameRecord } from '../src/import/index.ts';
import type { GameRecord } from '../src/store/index.ts';

const SOURCE = new URL('../../shared/pgn/large/notnil_chess__twic0920.pgn', import.meta.url).pathname;

/** Up to `distinct` records from TWIC 920, or generated games when the shared corpus is absent. */
export async function sampleRecords(distinct: number): Promise<GameRecord[]> {
  let text: string;
  if (existsSync(SOURCE)) {
    text = readFileSync(SOURCE, 'latin1');
  } else {
    // Without the shared corpus: generated games (shorter than real ones, so the export looks faster).
    text = Array.from(
      { length: distinct },
      (_, i) =>
        `[Event "Bench"]\n[White "White ${i}"]\n[Black "Black ${i}"]\n[Result "1-0"]\n\n` +
        '1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 1-0\n',
    ).join('\n');
  }
  const splitter = new PgnSplitter();
  const records: GameRecord[] = [];
  for (const raw of [...splitter.push(text), ...splitter.end()]) {
    const result = normalizeGame(raw.text);
    if (result.ok) records.push(toGameRecord(result.game));
    if (records.length === distinct) break;
  }
  return records;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()));
    });
  });
}

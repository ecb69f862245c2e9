// `npm run bench`: every benchmark in turn, each in its own process, each printing its table.
// Timings on a shared machine are noisy: read the ratios measured within one run, not absolute figures.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const parts = [
  'chess.ts',
  'import.ts',
  'feed.ts',
  'longpoll.ts',
  'http.ts',
  'takeover.ts',
  'abuse.ts',
  'existence.ts',
  'scale.ts',
  'replicas.ts',
  'filters.ts',
  'filter-indexes.ts',
  'webhooks.ts',
  'failover.ts',
];
let failed = false;
for (const part of parts) {
  const file = join(import.meta.dirname, part);
  if (!existsSync(file)) continue;
  console.log(`\n=== bench/${part}`);
  const run = spawnSync(process.execPath, [file], { stdio: 'inherit' });
  if (run.status !== 0) {
    console.log(`bench/${part} failed (exit ${run.status})`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);

// Preloaded into a command (`node --import <this> bin/chessport.js ...`): when the process exits, writes its
// peak resident set size in KiB, worker threads included, to PEAK_RSS_FILE. On Linux that is VmHWM in
// /proc/self/status: process.resourceUsage().maxRSS (getrusage) keeps, across the exec that starts the command,
// the peak of the process that spawned it (a test holding a large buffer), and so reports that when larger.
import { readFileSync, writeFileSync } from 'node:fs';

/** The peak resident set size of this program, in KiB. */
function peakKib(): number {
  try {
    const hwm = /^VmHWM:\s*(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]);
  } catch {
    // Not Linux: getrusage's figure.
  }
  return process.resourceUsage().maxRSS;
}

const file = process.env.PEAK_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(peakKib())));

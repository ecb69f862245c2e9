// Preloaded into a command (`node --import <this> bin/chessport.js ...`): when the process exits, writes its
// peak resident set size in KiB (process.resourceUsage().maxRSS, worker threads included) to PEAK_RSS_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.PEAK_RSS_FILE;
if (file) process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));

// Import progress: a live line on a terminal (games, games/s, bytes, ETA), plain lines otherwise.
import type { ImportProgress } from '../import/index.ts';
import { type CliOutput, cliIo } from './io.ts';
import { counted, terminalSafe } from './output.ts';

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** No ETA before this: the first second (workers starting, code warming up) says little of the rest. */
const ETA_AFTER_MS = 1000;

/** 45s, 3m05s, 1h02m: an hour-long import in seconds (3725s) had to be worked out by the reader. */
export function duration(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/**
 * The line, at most `columns - 1` wide: a line as wide as the terminal, or wider, wraps, and `\r` then goes back
 * to the start of its last row only, so that each redraw left a row behind (a path of 70 characters did that on
 * 80 columns). The file's name gives way first, from its start (its end tells files apart), then the rate and
 * the bytes (`short`), then the name.
 */
export function fitted(prefix: string, name: string, stats: string, short: string, columns: number): string {
  const width = columns - 1;
  const line = `${prefix}${name}: ${stats}`;
  if (line.length <= width) return line;
  for (const s of [stats, short]) {
    const room = width - prefix.length - s.length - 5; // "..." and ": "
    if (room >= Math.min(8, name.length)) {
      return room >= name.length ? `${prefix}${name}: ${s}` : `${prefix}...${name.slice(-room)}: ${s}`;
    }
  }
  return `${prefix}${short}`.slice(0, width);
}

export interface ProgressOptions {
  /** This file's place among several (`[2/3] `), when there are several. */
  position?: { index: number; count: number };
  /** No plain lines where the stream is no terminal (--json: a script reads the output). */
  quiet?: boolean;
}

export function progressReporter(stream: CliOutput = cliIo().stderr, options: ProgressOptions = {}) {
  const started = performance.now();
  const live = Boolean(stream.isTTY);
  // A terminal shows the line at once; a log gets its first line after 5 s, so none for a short import.
  let last = live ? Number.NEGATIVE_INFINITY : started;
  let shown = false;
  const interval = live ? 200 : 5000;
  const prefix = options.position ? `[${options.position.index + 1}/${options.position.count}] ` : '';
  return {
    update(p: ImportProgress): void {
      if (!live && options.quiet) return;
      const now = performance.now();
      if (now - last < interval) return;
      last = now;
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? p.games / seconds : 0;
      let stats = `${counted(p.games, 'game')}, ${Math.round(rate)} games/s, ${mb(p.bytes)}`;
      let short = counted(p.games, 'game');
      // A pipe's size is unknown (0): no total, no ETA.
      if (p.totalBytes > 0) {
        const done = Math.min(1, p.bytes / p.totalBytes);
        const eta =
          now - started >= ETA_AFTER_MS && done > 0 ? duration((seconds * (1 - done)) / done) : '...';
        stats += ` of ${mb(p.totalBytes)}, ETA ${eta}`;
        short += `, ${Math.floor(done * 100)}%, ETA ${eta}`;
      } else short += `, ${mb(p.bytes)}`;
      const name = terminalSafe(p.file);
      if (!live) {
        stream.write(`${prefix}${name}: ${stats}\n`);
        return;
      }
      stream.write(`\r\x1b[2K${fitted(prefix, name, stats, short, stream.columns || 80)}`);
      shown = true;
    },
    /** Clears the live line, so that what follows starts on a clean line. */
    done(): void {
      if (shown) stream.write('\r\x1b[2K');
      shown = false;
    },
  };
}

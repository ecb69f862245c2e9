// Import progress: a live line on a terminal (games, games/s, bytes, ETA), plain lines otherwise.
import type { ImportProgress } from '../import/index.ts';
import { terminalSafe } from './output.ts';

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function progressReporter(stream: NodeJS.WriteStream = process.stderr) {
  const started = performance.now();
  let last = 0;
  const interval = stream.isTTY ? 200 : 5000;
  return {
    update(p: ImportProgress): void {
      const now = performance.now();
      if (now - last < interval) return;
      last = now;
      const seconds = (now - started) / 1000;
      const rate = seconds > 0 ? p.games / seconds : 0;
      const head = `${terminalSafe(p.file)}: ${p.games} games, ${Math.round(rate)} games/s, ${mb(p.bytes)}`;
      // A pipe's size is unknown (0): no total, no ETA.
      const eta = p.bytes > 0 ? ((p.totalBytes - p.bytes) * seconds) / p.bytes : 0;
      const line = p.totalBytes >= p.bytes ? `${head} of ${mb(p.totalBytes)}, ETA ${Math.ceil(eta)}s` : head;
      stream.write(stream.isTTY ? `\r\x1b[2K${line}` : `${line}\n`);
    },
    done(): void {
      if (stream.isTTY && last > 0) stream.write('\r\x1b[2K');
    },
  };
}

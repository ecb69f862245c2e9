// An import's progress in bytes of its file: those behind the games checked so far, estimated from the text
// checked, not those read (the reading runs far ahead of the checking: checking-queue.ts).

export interface ImportProgress {
  file: string;
  /** Games checked so far (imported, duplicates, rejected, or in the batch being written). */
  games: number;
  /**
   * Bytes of the file those games came from (compressed ones, for a .gz), estimated from the text checked. Not
   * the bytes read: the file is read far ahead of the checking (checking-queue.ts), and by bytes read a file
   * that fits in that distance would show all its bytes done, and an ETA of 0 s, while its first games are
   * checked.
   */
  bytes: number;
  /** The input's size; 0 for a pipe. */
  totalBytes: number;
}

/**
 * Counts what the stages of the reading made of the file (bytes read, the input's bytes, those bytes decoded,
 * the text's length) and reports the bytes of the file behind the text checked.
 */
export class ProgressMeter {
  private readonly file: string;
  private readonly totalBytes: number;
  private readonly onProgress: ((progress: ImportProgress) => void) | undefined;
  /** Bytes of the file read (compressed ones, for a .gz). */
  private readBytes = 0;
  /** Bytes the input gave (decompressed). */
  private givenBytes = 0;
  /** Bytes of the input decoded into text. */
  private decodedBytes = 0;
  /** That text's length. */
  private readChars = 0;
  private shownBytes = 0;

  constructor(file: string, totalBytes: number, onProgress?: (progress: ImportProgress) => void) {
    this.file = file;
    this.totalBytes = totalBytes;
    this.onProgress = onProgress;
  }

  /** The bytes of the file read so far (a running total). */
  read(bytes: number): void {
    this.readBytes = bytes;
  }

  /** The input's bytes, counted as they pass. */
  async *given(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const bytes of source) {
      this.givenBytes += bytes.length;
      yield bytes;
    }
  }

  /** So many more bytes of the input were decoded. */
  decoded(bytes: number): void {
    this.decodedBytes += bytes;
  }

  /** So much more text was read. */
  text(chars: number): void {
    this.readChars += chars;
  }

  /** Reports `games` checked, from `checkedChars` of the text. */
  report(games: number, checkedChars: number): void {
    if (!this.onProgress || this.readChars === 0) return;
    // The bytes of the file behind the games checked: the text checked, in bytes of the file. Never less than
    // shown before (the proportions vary along a file), nor more than read.
    const bytes = Math.round(
      ((this.decodedBytes * checkedChars) / this.readChars) * (this.readBytes / Math.max(1, this.givenBytes)),
    );
    this.shownBytes = Math.max(this.shownBytes, Math.min(bytes, this.readBytes));
    this.onProgress({ file: this.file, games, bytes: this.shownBytes, totalBytes: this.totalBytes });
  }
}

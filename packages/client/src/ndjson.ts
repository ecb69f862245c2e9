// NDJSON (one JSON value a line, each line ending in "\n") read from a stream of text as it arrives: one line
// is held at a time, never the whole answer, so an export of any size is read in constant memory.

/** @internal A line that is no JSON object, or a last line without its "\n" (the answer broke off). */
export class NdjsonError extends Error {
  /** The answer ended inside a line: it broke off. */
  readonly truncated: boolean;

  constructor(message: string, truncated: boolean) {
    super(message);
    this.truncated = truncated;
  }
}

/**
 * @internal The whole lines of each chunk as they arrive (without their "\n", empty ones included), the
 * part of a line a chunk ends in held until its end comes; a last line without its "\n" is the answer
 * broken off.
 */
export async function* ndjsonLineChunks(text: AsyncIterable<string>): AsyncGenerator<string[]> {
  let held = '';
  let lines = 0;
  for await (const chunk of text) {
    held += chunk;
    const end = held.lastIndexOf('\n');
    if (end === -1) continue;
    const whole = held.slice(0, end).split('\n');
    held = held.slice(end + 1);
    lines += whole.length;
    yield whole;
  }
  if (held.trim() !== '')
    throw new NdjsonError(`the answer ended inside line ${lines + 1}, without its line break`, true);
}

/** @internal Each line's JSON object, in order; an empty line is skipped. */
export async function* ndjsonObjects(text: AsyncIterable<string>): AsyncGenerator<object> {
  let line = 0;
  for await (const lines of ndjsonLineChunks(text)) {
    for (const value of lines) {
      line++;
      if (value.trim() !== '') yield parsed(value, line);
    }
  }
}

function parsed(text: string, line: number): object {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new NdjsonError(`line ${line} is not a JSON object: ${text.slice(0, 100)}`, false);
  return value;
}

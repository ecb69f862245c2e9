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

/** @internal Each line's JSON object, in order; an empty line is skipped. */
export async function* ndjsonObjects(text: AsyncIterable<string>): AsyncGenerator<object> {
  let held = '';
  let line = 0;
  for await (const chunk of text) {
    held += chunk;
    let start = 0;
    for (let end = held.indexOf('\n'); end !== -1; end = held.indexOf('\n', start)) {
      line++;
      const value = held.slice(start, end);
      start = end + 1;
      if (value.trim() !== '') yield parsed(value, line);
    }
    held = held.slice(start);
  }
  if (held.trim() !== '')
    throw new NdjsonError(`the answer ended inside line ${line + 1}, without its line break`, true);
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

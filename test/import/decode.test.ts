// PGN bytes to text (decode.ts): encodings decided per line, line ends, BOMs; the same text however the
// bytes arrive in chunks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LongLine } from '../../src/chess/index.ts';
import { splitPgn } from '../../src/chess/index.ts';
import { decodePgnStream } from '../../src/import/decode.ts';

/** The text decodePgnStream makes of `bytes` when they arrive in pieces of `size` bytes. */
async function decode(bytes: Buffer, size = bytes.length): Promise<string> {
  async function* pieces() {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }
  const chunks: string[] = [];
  for await (const chunk of decodePgnStream(pieces())) chunks.push(chunk);
  // The splitter relies on it: every text chunk but the last ends a line.
  for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.endsWith('\n'), JSON.stringify(chunk));
  return chunks.join('');
}

/** Asserts that every chunking of `bytes` decodes to `expected`. */
async function decodesTo(bytes: Buffer, expected: string): Promise<void> {
  for (let size = 1; size <= bytes.length; size++)
    assert.equal(await decode(bytes, size), expected, `size ${size}`);
}

const latin1 = (text: string) => Buffer.from(text, 'latin1');

test('lines ending with a lone CR (old Mac OS) are read as lines: two games, not one rejected', async () => {
  const bytes = latin1('[Event "A"]\r[Result "1-0"]\r\r1. e4 e5 1-0\r\r[Event "B"]\r\r1. d4 d5 0-1\r');
  const text = '[Event "A"]\n[Result "1-0"]\n\n1. e4 e5 1-0\n\n[Event "B"]\n\n1. d4 d5 0-1\n';
  await decodesTo(bytes, text);
  assert.deepEqual(
    splitPgn(text).map((g) => g.line),
    [1, 6],
  );
});

test('CRLF and LF files keep their line ends', async () => {
  await decodesTo(latin1('[Event "A"]\r\n\r\n1. e4 *\r\n'), '[Event "A"]\r\n\r\n1. e4 *\r\n');
  await decodesTo(latin1('[Event "A"]\n\n1. e4 *'), '[Event "A"]\n\n1. e4 *');
});

test('a BOM at the start of the input or of a line is dropped; inside a line it is text', async () => {
  const bom = '\uFEFF';
  const bytes = Buffer.from(`${bom}[Event "A"]\n\n1. e4 *\n\n${bom}[Event "B"]\n\n1. d4 {a${bom}b} *\n`);
  await decodesTo(bytes, `[Event "A"]\n\n1. e4 *\n\n[Event "B"]\n\n1. d4 {a${bom}b} *\n`);
});

test('a line that is not UTF-8 reads its UTF-8 sequences as UTF-8 and the other bytes as Latin-1', async () => {
  // "Müller" in UTF-8 and "György" in Latin-1 on one line; the next line is UTF-8 alone.
  const bytes = Buffer.concat([
    Buffer.from('1. e4 {Müller vs '),
    latin1('György} *\n'),
    Buffer.from('{Jürgen} *\n'),
  ]);
  await decodesTo(bytes, '1. e4 {Müller vs György} *\n{Jürgen} *\n');
  // What UTF-8 forbids is Latin-1: an overlong form (C0 80), a surrogate (ED A0 80), a value above U+10FFFF
  // (F4 90 80 80), a sequence cut short (E2 82) and a stray continuation byte (80).
  const bad = Buffer.from([
    0xc0, 0x80, 0x20, 0xed, 0xa0, 0x80, 0x20, 0xf4, 0x90, 0x80, 0x80, 0x20, 0xe2, 0x82, 0x20, 0x80,
  ]);
  await decodesTo(Buffer.concat([bad, Buffer.from(' \u20ac\n')]), `${bad.toString('latin1')} \u20ac\n`);
});

test('line ends are decided per line: a file may mix LF, CRLF and lone CRs (joined files)', async () => {
  const bytes = latin1('[Event "A"]\n\n1. e4 *\n\n[Event "B"]\r\r1. d4 *\r\r[Event "C"]\r\n\r\n1. c4 *\r\n');
  const text = '[Event "A"]\n\n1. e4 *\n\n[Event "B"]\n\n1. d4 *\n\n[Event "C"]\r\n\r\n1. c4 *\r\n';
  await decodesTo(bytes, text);
  assert.deepEqual(
    splitPgn(text).map((g) => g.line),
    [1, 5, 9],
  );
});

test('a long run of lone-CR lines is passed on as it comes, not held whole', async () => {
  // 4 MB of CR-only lines after an LF line, in 64 KB pieces: each yields its lines (held whole before).
  const bytes = Buffer.concat([latin1('[Event "A"]\n'), latin1('1. e4 e5 *\r\r'.repeat(300_000))]);
  async function* pieces() {
    for (let at = 0; at < bytes.length; at += 1 << 16) yield bytes.subarray(at, at + (1 << 16));
  }
  let yields = 0;
  let largest = 0;
  for await (const chunk of decodePgnStream(pieces())) {
    yields++;
    largest = Math.max(largest, chunk.length);
  }
  assert.ok(yields >= 50 && largest < (1 << 16) + 64, `${yields} pieces, the largest ${largest}`);
});

test('a long line that comes in many pieces is joined once, not again with each piece', async (t) => {
  // 2 MB without a line end in 4 KB pieces, as a pipe delivers a file of games joined on one line (HTML
  // exports). Joined again with each piece, each was copied onto all the ones before it: some 270 copies of
  // the line on average here, quadratic in its length. Joined once, every byte is copied a few times at most.
  const line = Buffer.from('1. e4 e5 * '.repeat(200_000));
  const input = Buffer.concat([line, latin1('\n1. d4 *\n')]);
  const concat = t.mock.method(Buffer, 'concat');
  const text = await decode(input, 4096);
  const copied = concat.mock.calls.reduce((sum, call) => sum + (call.result?.length ?? 0), 0);
  concat.mock.restore();
  assert.equal(text.length, line.length + 9);
  assert.ok(text.endsWith('1. e4 e5 * \n1. d4 *\n'));
  assert.ok(copied <= 3 * input.length, `${copied} bytes copied for ${input.length}`);
});

/** What decodePgnStream makes of `bytes` in pieces of `size` with a line limit: texts and long lines. */
async function decodeLimited(
  bytes: Buffer,
  size: number,
  options: { maxLineBytes: number; headBytes: number },
): Promise<{ out: (string | LongLine)[]; counted: number }> {
  async function* pieces() {
    for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
  }
  const out: (string | LongLine)[] = [];
  let counted = 0;
  for await (const chunk of decodePgnStream(pieces(), (n) => (counted += n), options)) {
    // Texts joined as they come: where they are cut depends on the pieces, not what they say.
    const last = out[out.length - 1];
    if (typeof chunk === 'string' && typeof last === 'string') out[out.length - 1] = last + chunk;
    else out.push(chunk);
  }
  return { out, counted };
}

test('a line longer than maxLineBytes is never decoded whole: its head, its length and what was left out', async () => {
  const limits = { maxLineBytes: 10, headBytes: 4 };
  for (const [eol, text] of [
    ['\n', '\n'],
    ['\r\n', '\r\n'],
    ['\r', '\n'],
  ] as const) {
    const bytes = latin1(`1. e4 *${eol}{0123456789abc}${eol}1. d4 *${eol}`);
    for (let size = 1; size <= bytes.length; size++) {
      const { out, counted } = await decodeLimited(bytes, size, limits);
      assert.deepEqual(
        out,
        [`1. e4 *${text}`, { head: '{012', bytes: 15, dropped: 11 }, `1. d4 *${text}`],
        `${JSON.stringify(eol)}, pieces of ${size}`,
      );
      assert.equal(counted, bytes.length, 'every byte counted as decoded');
    }
  }
  // A line of exactly maxLineBytes is decoded; one at the end of the input, without a line end, is not.
  for (let size = 1; size <= 20; size++) {
    const { out } = await decodeLimited(latin1('0123456789\n0123456789a'), size, limits);
    assert.deepEqual(out, ['0123456789\n', { head: '0123', bytes: 11, dropped: 7 }], `pieces of ${size}`);
  }
});

test("a long line's head ends at a character: never half of a UTF-8 sequence", async () => {
  // "ééééé...": two bytes each; a head of 5 bytes holds two of them and leaves out the rest.
  const bytes = Buffer.from(`${'é'.repeat(20)}\n*\n`);
  for (let size = 1; size <= bytes.length; size++) {
    const { out } = await decodeLimited(bytes, size, { maxLineBytes: 10, headBytes: 5 });
    assert.deepEqual(out, [{ head: 'éé', bytes: 40, dropped: 36 }, '*\n'], `pieces of ${size}`);
  }
});

test('a 64 MB line in 1 MB pieces comes as its head and its length', async () => {
  const piece = Buffer.alloc(1 << 20, 'a');
  async function* pieces() {
    yield latin1('1. e4 *\n');
    for (let i = 0; i < 64; i++) yield piece;
    yield latin1('\n1. d4 *\n');
  }
  const out: (string | LongLine)[] = [];
  for await (const chunk of decodePgnStream(pieces(), undefined, {
    maxLineBytes: 4 << 20,
    headBytes: 1 << 10,
  }))
    out.push(chunk);
  assert.deepEqual(out, [
    '1. e4 *\n',
    { head: 'a'.repeat(1024), bytes: 64 << 20, dropped: (64 << 20) - 1024 },
    '1. d4 *\n',
  ]);
});

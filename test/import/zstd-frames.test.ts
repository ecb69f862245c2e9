// Node's zstd decompressor decodes only the first of several frames given in one write (nodejs/node#64741):
// ZstdFrames cuts the compressed bytes at frame ends, wherever the reads cut them.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { constants, createZstdDecompress, zstdCompressSync } from 'node:zlib';
import { ZstdFrames } from '../../src/import/zstd-frames.ts';

async function decompressed(compressed: Buffer, readSize: number, frames = true): Promise<string> {
  const reads: Buffer[] = [];
  for (let at = 0; at < compressed.length; at += readSize) reads.push(compressed.subarray(at, at + readSize));
  const chunks: Buffer[] = [];
  await pipeline(
    Readable.from(reads),
    ...(frames ? [new ZstdFrames()] : []),
    createZstdDecompress(),
    async (text) => {
      for await (const chunk of text as AsyncIterable<Buffer>) chunks.push(chunk);
    },
  );
  return Buffer.concat(chunks).toString();
}

test('frames of every kind, read whole or in pieces that cut their headers: all their text', async () => {
  const texts = ['[Result "*"]\n\n*\n', 'x'.repeat(300_000), `${'1. e4 e5 '.repeat(40_000)}\n`, ''];
  const skippable = Buffer.concat([Buffer.from([0x53, 0x2a, 0x4d, 0x18, 5, 0, 0, 0]), Buffer.from('meta!')]);
  const compressed = Buffer.concat([
    zstdCompressSync(texts[0] as string),
    skippable,
    zstdCompressSync(texts[1] as string, { params: { [constants.ZSTD_c_checksumFlag]: 1 } }),
    zstdCompressSync(texts[2] as string, { params: { [constants.ZSTD_c_contentSizeFlag]: 0 } }),
    zstdCompressSync(texts[3] as string),
  ]);
  // Without it, the text of the first frame alone: what this works around.
  assert.equal(await decompressed(compressed, 1 << 20, false), texts[0]);
  for (const readSize of [1, 2, 3, 7, 4096, 1 << 20]) {
    assert.equal(await decompressed(compressed, readSize), texts.join(''), `reads of ${readSize} bytes`);
  }
});

test('bytes that are no frame after a good one pass on, for the decompressor to fail on', async () => {
  const compressed = Buffer.concat([zstdCompressSync('[Result "*"]\n\n*\n'), Buffer.from('garbage!')]);
  await assert.rejects(decompressed(compressed, 5));
});

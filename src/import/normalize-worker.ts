// Worker thread entry: normalises the batches the pool sends, answering each with its id.
import { parentPort } from 'node:worker_threads';
import { normalizeBatch } from './normalize-batch.ts';

parentPort?.on('message', (message: { id: number; texts: string[]; lines?: number[] }) => {
  parentPort?.postMessage({ id: message.id, batch: normalizeBatch(message.texts, message.lines) });
});

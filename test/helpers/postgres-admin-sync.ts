// Statements on the test PostgreSQL server, synchronously: tempEnv() is synchronous (every suite calls it so)
// and pg is not. A worker thread of the test's process holds the pg work, and the caller waits for its answer
// with Atomics.wait, the way synckit does it: a database made in a few milliseconds of the server's time
// rather than a node process started for each (about 0.2 s of CPU), twice a suite on the PostgreSQL pass.
// Written by hand: the pattern is a dozen lines, where synckit would be a dependency for the tests alone.
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';

/** A request the worker carries out: the steps of making a copy of the template, or one statement. */
export type AdminRequest =
  | { kind: 'statement'; admin: string; statement: string }
  | {
      kind: 'copy';
      admin: string;
      template: string;
      name: string;
      building: string;
      icu: string;
      plain: string;
      storeModule: string;
    };

// CommonJS run by `eval`: the worker needs no file of its own, and pg is required by its resolved path.
const WORKER = `
const { workerData } = require('node:worker_threads');
const pg = require(workerData.pg);
const { port, shared } = workerData;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const urlOf = (admin, database) => { const url = new URL(admin); url.pathname = '/' + database; return url.toString(); };

async function copy(client, r) {
  const exists = await client.query('select 1 from pg_database where datname = $1', [r.template]);
  if (exists.rowCount === 0) {
    await client.query(r.icu).catch(() => client.query(r.plain));
    const { openStore } = await import(r.storeModule);
    const store = await openStore(urlOf(r.admin, r.building));
    await store.close();
    // The sessions of the store end as it closes; their backends may take a moment longer.
    for (let attempt = 0; ; attempt++) {
      try {
        await client.query('alter database ' + r.building + ' rename to ' + r.template);
        break;
      } catch (error) {
        if (error.code === '42P04') { await client.query('drop database ' + r.building + ' with (force)'); break; }
        if (error.code !== '55006' || attempt >= 50) throw error;
        await sleep(100);
      }
    }
  }
  for (let attempt = 0; ; attempt++) {
    try {
      await client.query('create database ' + r.name + ' template ' + r.template);
      return;
    } catch (error) {
      // Another copy of the template being made at this instant: PostgreSQL refuses to copy it twice at once.
      if (error.code !== '55006' || attempt >= 100) throw error;
      await sleep(50 + Math.random() * 100);
    }
  }
}

port.on('message', async (request) => {
  let answer;
  const client = new pg.Client(request.admin);
  try {
    await client.connect();
    if (request.kind === 'copy') await copy(client, request);
    else await client.query(request.statement);
    answer = { ok: true };
  } catch (error) {
    answer = { ok: false, message: error instanceof Error ? error.message : String(error), code: error?.code };
  } finally {
    await client.end().catch(() => undefined);
  }
  port.postMessage(answer);
  Atomics.store(shared, 0, 1);
  Atomics.notify(shared, 0);
});
`;

let worker: { port: MessagePort; shared: Int32Array } | undefined;

function started(): { port: MessagePort; shared: Int32Array } {
  if (worker) return worker;
  const shared = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const pgPath = createRequire(import.meta.url).resolve('pg');
  const thread = new Worker(WORKER, {
    eval: true,
    workerData: { pg: pgPath, port: port2, shared },
    transferList: [port2],
  });
  // The test's process ends when its tests do: the idle worker does not hold it.
  thread.unref();
  port1.unref();
  worker = { port: port1, shared };
  return worker;
}

/** Carries out `request` on the test server and returns once it is done; throws what PostgreSQL said. */
export function adminSync(request: AdminRequest): void {
  const { port, shared } = started();
  Atomics.store(shared, 0, 0);
  port.postMessage(request);
  // Against a hang only: a busy server copies a template in seconds.
  if (Atomics.wait(shared, 0, 0, 120_000) === 'timed-out')
    throw new Error('the test PostgreSQL did not answer in 120 s');
  const answer = receiveMessageOnPort(port)?.message as
    | { ok: true }
    | { ok: false; message: string; code?: string }
    | undefined;
  if (!answer) throw new Error('the PostgreSQL worker gave no answer');
  if (!answer.ok) throw Object.assign(new Error(answer.message), { code: answer.code });
}

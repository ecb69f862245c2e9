// Worker threads (the import's checking workers, the store's checkpoint thread, the sync's take-over writer)
// start from JavaScript bundles when the command runs from its bundle (bin/cli-bundle.js):
// scripts/vendor-bundles.ts makes the workers' bundles with the command's and writes where they are into it.
// From the sources (after an edit, in the tests' own processes) a worker starts from its sources.
//
// Why: each thread loads its modules in an isolate of its own, and a thread that loads TypeScript loads and
// compiles Node's type stripper (amaro, a WebAssembly module) there unless Node's compile cache holds every
// module it loads; a bundle is plain JavaScript (docs/performance.md).
// A leaf of its own, importing nothing of the project: both the store and the import start workers.

/**
 * Written into the command's bundle by esbuild (`define`), as JSON: each worker entry's URL to its bundle's
 * URL. Not defined in the sources.
 */
declare const CHESSPORT_WORKER_BUNDLES: string | undefined;

/** Each worker entry's URL to its bundle's URL: none from the sources. */
export const WORKER_BUNDLES: Readonly<Record<string, string>> =
  typeof CHESSPORT_WORKER_BUNDLES === 'undefined' ? {} : JSON.parse(CHESSPORT_WORKER_BUNDLES);

/** The URL to start the worker `entry` (a module of this project) from: its bundle if there is one, else itself. */
export function workerUrl(entry: URL, bundles = WORKER_BUNDLES): URL {
  const bundle = bundles[entry.href];
  return bundle === undefined ? entry : new URL(bundle);
}

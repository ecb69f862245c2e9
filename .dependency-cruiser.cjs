// The project's layers (docs/architecture.md "Layers"), checked by dependency-cruiser in `npm test`:
// data flows one way, `chess` (pure) -> `import` -> `store`, `api` -> `store`, `webhooks` -> `store`, `cli`
// on top; `client` (packages/client) stands alone and `sync` builds on it; `workers` holds what starts worker
// threads and knows nothing of the project. Every import counts, `import type` too (a type-only cycle still
// ties two modules together).
//
// The project runs TypeScript directly, with `.ts` in its import paths. TypeScript 7 has no compiler API
// for dependency-cruiser to parse with, so swc (@swc/core) parses, and it reports type-only imports as such.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'Modules depend one way: two modules that import each other (types too) are one concern, or two layers mixed.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'chess-is-pure',
      comment: 'src/chess is pure chess: chessops and Node.js built-ins, nothing of the project outside it.',
      severity: 'error',
      from: { path: '^src/chess/' },
      to: { dependencyTypesNot: ['core'], pathNot: ['^src/chess/', '^node_modules/chessops/'] },
    },
    {
      name: 'store-below-api-cli-import',
      comment:
        'The store is the lowest layer but chess: the API, the CLI and the import build on it, never the reverse.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(api|cli|import|sync|webhooks)/' },
    },
    {
      name: 'api-below-cli-import',
      comment:
        'The API serves the store; the CLI starts it, and the import (with the chess it checks and the worker ' +
        'threads it runs) is not its business.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(cli|import|sync|webhooks|chess|workers)/' },
    },
    {
      name: 'import-below-api-cli',
      comment: 'The import writes to the store; the CLI runs it, the API never calls it.',
      severity: 'error',
      from: { path: '^src/import/' },
      to: { path: '^src/(api|cli|sync|webhooks)/' },
    },
    {
      name: 'webhooks-on-store',
      comment:
        'src/webhooks delivers what the store records: it builds on the store, and of the API takes only the ' +
        'pairwise ids (what /me gives each app) and the process metrics; the CLI runs it, nothing else.',
      severity: 'error',
      from: { path: '^src/webhooks/' },
      to: {
        path: '^src/(cli|import|sync|client|chess|api)/',
        pathNot: '^src/api/(pairwise|metrics)[.]ts$',
      },
    },
    {
      name: 'client-stands-alone',
      comment:
        '@chessport/client (packages/client) runs on global fetch alone (Node.js, Deno, Bun, browsers) and has ' +
        'no runtime dependencies: its sources import only each other, no package and no Node.js built-in.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { pathNot: '^packages/client/src/' },
    },
    {
      name: 'sync-on-client',
      comment: 'The sync engine is a consumer of the API: it builds on the client, never on the server.',
      severity: 'error',
      from: { path: '^src/sync/' },
      to: { path: '^src/(api|cli|import|store|chess|workers)/' },
    },
    {
      name: 'client-through-its-entry',
      comment:
        'The project uses the client as a package user does: through packages/client/src/index.ts alone ' +
        '(the tests may read its types module too).',
      severity: 'error',
      from: { path: '^(src|bin|scripts|bench)/' },
      to: { path: '^packages/client/', pathNot: '^packages/client/src/index[.]ts$' },
    },
    {
      name: 'examples-as-integrators',
      comment:
        'examples/ shows an integration: it imports the package @chessport/client by name, as an app that ' +
        'installed it does, and nothing of the project by path.',
      severity: 'error',
      from: { path: '^examples/' },
      to: { path: '^(src|bin|scripts|bench|test|packages)/' },
    },
    {
      name: 'only-cli-and-sync-use-the-client',
      comment: 'The server, the store, the import and chess know nothing of the client: they share no code.',
      severity: 'error',
      from: { path: '^src/(api|store|import|chess|workers)/' },
      to: { path: '^packages/client/' },
    },
    {
      name: 'workers-know-nothing',
      comment: 'src/workers starts worker threads for any layer, so it imports nothing of the project.',
      severity: 'error',
      from: { path: '^src/workers/' },
      to: { path: '^src/', pathNot: '^src/workers/' },
    },
    {
      name: 'nothing-under-cli',
      comment: 'The CLI is the top layer: nothing else in src imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve is a typo or a missing package.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // swc reports every import, `import type` included, marked type-only; tsPreCompilationDeps selects
    // what the TypeScript parser reports and, set, would ask for a TypeScript compiler API that 7 lacks.
    parser: 'swc',
    doNotFollow: { path: 'node_modules' },
    // A package's build output (packages/client/dist) is tsc's, not the project's modules.
    exclude: { path: '^packages/[^/]+/dist/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};

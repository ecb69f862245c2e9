// The project's layers (docs/architecture.md "Layers"), checked by dependency-cruiser in `npm test`:
// data flows one way, `chess` (pure) -> `import` -> `store`; `server` -> `api` and `oauth` side by side ->
// `store`; `webhooks` -> `store`; `platform` (Redis and what rests on it, the metrics registry, the HTTP kit)
// and `domain` (scopes, pairwise ids, feed cursors) serve the server's parts and the webhooks and import
// nothing of the project; `cli` on top; the workspace packages are client applications of the API beside
// the server: `@chessport/client` (packages/client) stands alone and `@chessport/sync` (packages/sync) builds
// on it, and the CLI runs the sync; `workers` holds what starts worker threads and knows nothing of the project. Every import counts,
// `import type` too (a type-only cycle still ties two modules together).
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
      name: 'store-below-the-rest',
      comment:
        'The store is the lowest layer but chess: the server and its parts, the webhooks, the import and the ' +
        'CLI build on it, never the reverse.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/(server|api|oauth|platform|domain|cli|import|webhooks)/' },
    },
    {
      name: 'server-composes',
      comment:
        'src/server composes the HTTP server: the API and the OAuth server side by side, with the plugins of ' +
        'every answer (request ids, logs, host, health, metrics, load shedding, timeouts). The CLI starts it; ' +
        'the import, the webhooks (which `serve` runs beside it) and chess are not its business.',
      severity: 'error',
      from: { path: '^src/server/' },
      to: { path: '^src/(cli|import|webhooks|chess|workers)/' },
    },
    {
      name: 'api-beside-oauth',
      comment:
        'The API (/api/v1) serves the store, on the platform and the domain; the server composes it beside the ' +
        'OAuth server, and neither imports the other nor the server. The CLI starts it, and the import (with ' +
        'the chess it checks and the worker threads it runs) is not its business.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(server|oauth|cli|import|webhooks|chess|workers)/' },
    },
    {
      name: 'oauth-beside-api',
      comment:
        'src/oauth, the OAuth authorization server, builds on the store, the platform and the domain (the scopes ' +
        'it grants); the server composes it beside the API, and neither imports the other.',
      severity: 'error',
      from: { path: '^src/oauth/' },
      to: { path: '^src/(api|server|cli|import|webhooks|chess|workers)/' },
    },
    {
      name: 'import-below-server-cli',
      comment: 'The import writes to the store; the CLI runs it, the server never calls it.',
      severity: 'error',
      from: { path: '^src/import/' },
      to: { path: '^src/(server|api|oauth|platform|domain|cli|webhooks)/' },
    },
    {
      name: 'webhooks-on-store',
      comment:
        'src/webhooks delivers what the store records: it builds on the store, the platform (the process ' +
        'metrics) and the domain (the pairwise ids /me gives each app), never on the API; the CLI runs it.',
      severity: 'error',
      from: { path: '^src/webhooks/' },
      to: { path: '^src/(cli|import|chess|api|oauth|server)/' },
    },
    {
      name: 'domain-knows-nothing',
      comment:
        'src/domain holds what the service means whatever speaks it (the scopes, pairwise user ids, feed ' +
        'cursors): the API, the OAuth server, the webhooks and the CLI share it, and it needs nothing of theirs ' +
        'nor of the store.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'platform-knows-nothing',
      comment:
        'src/platform is what the server, the API, the OAuth server and the webhooks share that is not the ' +
        'domain: the link to Redis and what rests on it (breaker, leases, outage log), the metrics registry, ' +
        'and the HTTP kit of every answer (the error shape, rate limits, compression, CORS). It serves them ' +
        'all, so it imports nothing of the project.',
      severity: 'error',
      from: { path: '^src/platform/' },
      to: { path: '^src/', pathNot: '^src/platform/' },
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
      comment:
        '@chessport/sync (packages/sync) is a client application of the API: it builds on @chessport/client ' +
        'and its own store (better-sqlite3), never on the server, the CLI or any other part of the project.',
      severity: 'error',
      from: { path: '^packages/sync/' },
      to: {
        dependencyTypesNot: ['core'],
        pathNot: ['^packages/sync/', '^packages/client/', '^node_modules/better-sqlite3/'],
      },
    },
    {
      name: 'packages-by-name',
      comment:
        'The project uses a workspace package as a package user does: by its name (@chessport/client, ' +
        '@chessport/sync), which resolves to its sources (the exports condition @chessport/source), never ' +
        'by a path into its folder. The tests may reach into a package by path, to test its modules alone. ' +
        '(An import by path is `local` alone; one by name is `aliased-workspace` from the root, `undetermined` ' +
        'from a workspace package.)',
      severity: 'error',
      from: { path: '^(src|bin|scripts|bench|packages/[^/]+)/' },
      to: {
        path: '^packages/',
        pathNot: '^$1/',
        dependencyTypes: ['local'],
        dependencyTypesNot: ['aliased-workspace'],
      },
    },
    {
      name: 'client-through-its-entry',
      comment:
        'The client is used through its entry alone (packages/client/src/index.ts, what @chessport/client ' +
        'resolves to), as a package user does.',
      severity: 'error',
      from: { path: '^(src|bin|scripts|bench|packages/sync)/' },
      to: { path: '^packages/client/', pathNot: '^packages/client/src/index[.]ts$' },
    },
    {
      name: 'sync-through-its-entry',
      comment:
        'The CLI runs the sync through its entry alone (packages/sync/src/index.ts, what @chessport/sync ' +
        'resolves to): the sync keeps its modules to itself.',
      severity: 'error',
      from: { path: '^(src|bin|scripts|bench)/' },
      to: { path: '^packages/sync/', pathNot: '^packages/sync/src/index[.]ts$' },
    },
    {
      name: 'examples-as-integrators',
      comment:
        'examples/ shows an integration: it imports the package @chessport/client by name, as an app that ' +
        'installed it does, and nothing of the project by path.',
      severity: 'error',
      from: { path: '^examples/' },
      to: {
        path: '^(src|bin|scripts|bench|test|packages)/',
        dependencyTypesNot: ['aliased-workspace'],
      },
    },
    {
      name: 'only-the-cli-uses-the-packages',
      comment:
        'The server, the store, the import, chess, the webhooks and the workers know nothing of the client ' +
        'or the sync: they share no code with a client application. The CLI alone runs the sync.',
      severity: 'error',
      from: { path: '^src/(server|api|oauth|platform|domain|store|import|chess|workers|webhooks)/' },
      to: { path: '^packages/' },
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
    // The workspace packages resolve to their sources, as the project's node, tsc and esbuild resolve them
    // (src/cli/workspace-sources.ts).
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['@chessport/source', 'import', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types'],
    },
  },
};

// The project's workspace packages (packages/*: @chessport/client, @chessport/sync) load from their
// TypeScript sources in the project's own processes. @chessport/client's exports name its build (dist/, what
// an integrator installs, since Node.js strips no types under node_modules) by default, and its sources under
// the condition "@chessport/source"; its build is made at install, so it would be stale after an edit of the
// sources (and it is gone while `npm pack` makes it anew). The workspace links (node_modules/@chessport/*)
// resolve to the packages' real paths, outside node_modules, where Node.js strips types.
//
// This adds the condition to every resolution of the thread, as `node --conditions=@chessport/source` would:
// bin/chessport.js before it loads the command from its sources, and the tests that load @chessport/sync in
// the test's own process (test/helpers/workspace-sources.ts). tsc (`customConditions`), esbuild
// (scripts/vendor-bundles.ts) and dependency-cruiser (`conditionNames`) resolve with it too.
import module from 'node:module';

/** The exports condition under which the workspace packages name their TypeScript sources. */
export const SOURCE_CONDITION = '@chessport/source';

let registered = false;

/** From now on this thread resolves the workspace packages to their sources. */
export function useWorkspaceSources(): void {
  if (registered) return;
  registered = true;
  module.registerHooks({
    resolve: (specifier, context, next) =>
      next(specifier, { ...context, conditions: [...(context.conditions ?? []), SOURCE_CONDITION] }),
  });
}

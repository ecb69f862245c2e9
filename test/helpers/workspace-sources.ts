// @chessport/sync's modules in a test's own process, loaded as the project's processes load them: with
// @chessport/client from its sources, not from the build of the last install (docs/architecture.md
// "Workspace packages from their sources"). The resolve hook must be in place before the sync's imports are
// resolved, and a module's static imports are all resolved before any of them runs: so this module registers
// it, then imports the sync dynamically. A test imports the sync's modules from here and their types directly:
// a module of the sync imported statically would bring the client's build in beside its sources, and with it
// a second ChessportError, which the sync's `instanceof` checks would not know.
import { useWorkspaceSources } from '../../src/cli/workspace-sources.ts';

useWorkspaceSources();

export const { Mirror } = await import('../../packages/sync/src/mirror.ts');
export const { SyncRun } = await import('../../packages/sync/src/run.ts');
export const { SyncError } = await import('../../packages/sync/src/errors.ts');
export const { TakeOverWriter } = await import('../../packages/sync/src/takeover-writer.ts');

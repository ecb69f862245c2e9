export { DEFAULT_MAX_GAME_SIZE, importFile } from './import-file.ts';
export type { ImportProgress } from './progress.ts';
export { toGameRecord } from './record.ts';
export { RejectsWriteError } from './rejects.ts';
export {
  emptySummary,
  ImportFailure,
  ImportInterrupted,
  type ImportSummary,
  type Rejection,
} from './summary.ts';

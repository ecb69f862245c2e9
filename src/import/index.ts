export {
  emptySummary,
  ImportFailure,
  ImportInterrupted,
  type ImportSummary,
  importFile,
  type Rejection,
} from './import-file.ts';
export type { ImportProgress } from './progress.ts';
export { toGameRecord } from './record.ts';
export { RejectsWriteError } from './rejects.ts';

export {
  emptySummary,
  ImportFailure,
  ImportInterrupted,
  type ImportProgress,
  type ImportSummary,
  importFile,
  type Rejection,
} from './import-file.ts';
export { toGameRecord } from './record.ts';
export { RejectsWriteError } from './rejects.ts';

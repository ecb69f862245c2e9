export {
  emptySummary,
  ImportFailure,
  type ImportProgress,
  type ImportSummary,
  importFile,
  type Rejection,
} from './import-file.ts';
export { toGameRecord } from './record.ts';
export { RejectsWriteError } from './rejects.ts';

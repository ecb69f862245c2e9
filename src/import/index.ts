export {
  emptySummary,
  type ImportProgress,
  type ImportSummary,
  importFile,
  type Rejection,
} from './import-file.ts';
export { toGameRecord } from './record.ts';

/** Pair annotations from the web page: the label schemes, the LMDB store, the pair-file export. */

export {
  composePlatt,
  crossFitted,
  fitPlatt,
  type Reliability,
  type ReliabilityBin,
  recalibrated,
  reliability,
  rescaleRanking,
} from './calibrate.js';
export { EXPORT_FORMATS, EXPORT_MEDIA_TYPE, type ExportFormat, exportLines } from './export.js';
export {
  type AnnotationReport,
  annotationReport,
  bestModelCut,
  type CutStats,
  cohensKappa,
  krippendorffAlpha,
  modelScores,
  type Scored,
} from './report.js';
export {
  type AnnotationScheme,
  type Decision,
  labelFor,
  SCHEME_INFO,
  SCHEMES,
  type SchemeInfo,
} from './schemes.js';
export {
  type Annotation,
  type AnnotationQuery,
  AnnotationStore,
  type AnnotationSummary,
  annotationId,
  type NewAnnotation,
} from './store.js';

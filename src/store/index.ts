export {
  ContextReader,
  type ContextSentence,
  MAX_CONTEXT,
  type SentenceContext,
  sentenceContext,
} from './context.js';
export { deletedIds } from './deleted.js';
export {
  GROUPS_DIR,
  type GroupKeySpec,
  type GroupOrder,
  type GroupTableInfo,
  GroupTables,
  GroupTableWriter,
  type GroupValue,
  groupKeySpecSchema,
  groupTableIdentity,
  groupValuesOf,
  parseGroupKeySpec,
  USER_ID_KEY,
} from './groups.js';
export { forEachGroup, type GroupView, withAdded } from './groups-added.js';
export {
  followedRewrites,
  IndexUse,
  rewriteLock,
  rewriting,
  STRUCTURE_LOCK,
  sealLock,
} from './index-lock.js';
export { loadWrites } from './live-load.js';
export { lmdbFixed } from './lmdb-build.js';
export { checkLmdbFile } from './lmdb-check.js';
export { DirLock, LOCK_FILE } from './lock.js';
export { type IndexSentences, openIndexSentences } from './open.js';
export {
  keyHash,
  type Meta,
  type NewSentence,
  type SentenceRecord,
  SentenceStore,
  STORE_DIR,
  type StoreOptions,
  type StoreOverlay,
} from './store.js';
export {
  type AddedSentence,
  IndexUpdates,
  MAX_REPORTED_IDS,
  type NewAdd,
  UPDATES_DIR,
} from './updates.js';
export { inTxn, lmdbWrite } from './write-errors.js';

export {
  keyHash,
  type Meta,
  type NewSentence,
  type SentenceRecord,
  SentenceStore,
  type StoreOptions,
} from './store.js';

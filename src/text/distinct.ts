/** Sentences kept once each by their dedup key, as the indexer keeps them (normalized text, first one wins). */
import { dedupKey } from './dedup.js';
import { normalize } from './normalize.js';

/** Texts normalized and de-duplicated as the indexer does, kept in the order offered. */
export class DistinctTexts {
  readonly texts: string[] = [];
  readonly #seen = new Set<string>();

  /** Keeps `text` unless it is empty or seen; whether it was kept. */
  add(text: string): boolean {
    const t = normalize(text);
    const k = dedupKey(t);
    if (k === '' || this.#seen.has(k)) return false;
    this.#seen.add(k);
    this.texts.push(t);
    return true;
  }
}

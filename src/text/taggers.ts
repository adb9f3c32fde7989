/**
 * Sentence taggers that make groups: a tagger derives a metadata value from a sentence's text, so a
 * group key works on a plain corpus. A key with a tagger takes the sentence's own metadata value when it
 * has one, and the tagger's otherwise.
 *
 *   TAGGERS.term.tag('We define perplexity as ...')  // 'perplexity'
 */
import { DEFINITION_TAGGER_VERSION, definitionOf } from './definitions.js';

export interface SentenceTagger {
  /** Name and version, recorded with what it built ("definitions@1"). */
  readonly id: string;
  tag(text: string): string | undefined;
}

export const TAGGERS: Readonly<Record<string, SentenceTagger>> = {
  /** The term a definition sentence defines (ParaSCI's definition groups). */
  term: { id: `definitions@${DEFINITION_TAGGER_VERSION}`, tag: (text) => definitionOf(text)?.term },
};

export function taggerFor(key: string): SentenceTagger | undefined {
  return Object.hasOwn(TAGGERS, key) ? TAGGERS[key] : undefined;
}

/** The search routes' operations. */
import type { ZodOpenApiPathsObject } from 'zod-openapi';
import { DEFAULT_LIMITS } from '../../context.js';
import { errors } from '../components.js';
import { md } from '../md.js';
import { classifyRequest, searchRequest } from '../requests.js';
import { ClassifyResponse, SearchResponse } from '../schemas/search.js';

export const searchPaths: ZodOpenApiPathsObject = {
  '/v1/search': {
    post: {
      operationId: 'search',
      tags: ['search'],
      summary: 'Top-k paraphrase candidates of one or more sentences.',
      description: md(
        'Encodes each query, fetches `candidates` nearest neighbours from the index (default: `k`, or',
        "`max(20, k)` when reranking), drops the query's own duplicates (`excludeDuplicates`), candidates",
        'below `minCosine` and those failing the lexical `filter`, reranks the rest with the cross-encoder',
        'when `rerank` is on and one is loaded, applies the `labels` and `minProbability` filters and',
        'returns at most `k` candidates per query, best first. Queries are normalized before encoding',
        '(control and invisible format characters removed, whitespace runs collapsed to one space and',
        'trimmed, lone surrogates replaced by U+FFFD, Unicode NFC); `results[].query` is the normalized',
        'text.',
        '',
        'With `rerank: true` but no cross-encoder loaded, candidates come back in ANN order without',
        '`label`, `probabilities` and `rerankRank`, except that a `labels` filter is then a 400.',
        '',
      ),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: searchRequest(DEFAULT_LIMITS),
            examples: {
              one: {
                summary: 'One sentence, reranked',
                value: {
                  text: 'The proverbs of Solomon, the son of David, king of Israel.',
                  k: 5,
                },
              },
              batch: {
                summary: 'Several sentences with the MultiPIT filter and only paraphrases',
                value: {
                  texts: ['A wise son makes a glad father.', "Hear, my son, your father's instruction."],
                  k: 10,
                  candidates: 50,
                  labels: ['paraphrase'],
                  filter: {
                    minTokens: 5,
                    bleuMax: 14,
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'One result per query, in request order.',
          content: {
            'application/json': {
              schema: SearchResponse,
              examples: {
                one: {
                  value: {
                    results: [
                      {
                        query: 'The proverbs of Solomon, the son of David, king of Israel.',
                        candidates: [
                          {
                            id: 1,
                            text: 'The proverbs of Solomon the son of David, king of Israel;',
                            cosine: 0.9712,
                            annRank: 1,
                            rerankRank: 1,
                            label: 'paraphrase',
                            probabilities: {
                              not_paraphrase: 0.08,
                              paraphrase: 0.92,
                            },
                            lexical: {
                              charNgramCosine: 0.94,
                              bleu: 71.2,
                              plr: 0,
                              lengthRatio: 1,
                            },
                            meta: {
                              ref: 'Proverbs 1:1',
                              version: 'KJV',
                            },
                          },
                        ],
                      },
                    ],
                    timings: {
                      encodeMs: 12.4,
                      searchMs: 0.9,
                      rerankMs: 180.3,
                      totalMs: 195.1,
                    },
                  },
                },
              },
            },
          },
        },
        ...errors('400', '401', '404', '409', '413', '415', '500', '503'),
      },
    },
  },
  '/v1/classify': {
    post: {
      operationId: 'classify',
      tags: ['search'],
      summary: 'Label sentence pairs with the cross-encoder.',
      description: md(
        "Scores each pair with the cross-encoder (texts normalized first) and returns every label's",
        'probability, the served label (the positive label when the calibrated P(paraphrase) reaches the',
        "labeling model's cut) and the model that labeled it. A pair scores the same in either order:",
        'P(s1, s2) = P(s2, s1). `labels.mode` chooses who labels: `fast` (the student), `balanced` (the',
        'teacher where the student is unsure; when the teacher is overloaded those pairs keep the student’s',
        'label and name the student as their model) or `best` (the teacher). Pairs are `[s1, s2]` arrays or',
        '`{s1, s2}` objects; the response echoes them as given. A 503 `UNAVAILABLE` when the service runs',
        'without a reranker.',
        '',
      ),
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: classifyRequest(DEFAULT_LIMITS),
            examples: {
              mixed: {
                value: {
                  pairs: [
                    ['A wise son makes a glad father.', 'A wise son maketh a glad father.'],
                    {
                      s1: 'The cat sat on the mat.',
                      s2: 'Stocks fell sharply on Monday.',
                    },
                  ],
                },
              },
            },
          },
        },
      },
      responses: {
        '200': {
          description: 'One result per pair, in request order.',
          content: {
            'application/json': {
              schema: ClassifyResponse,
              examples: {
                mixed: {
                  value: {
                    labels: ['not_paraphrase', 'paraphrase'],
                    results: [
                      {
                        s1: 'A wise son makes a glad father.',
                        s2: 'A wise son maketh a glad father.',
                        label: 'paraphrase',
                        probabilities: {
                          not_paraphrase: 0.1,
                          paraphrase: 0.9,
                        },
                      },
                      {
                        s1: 'The cat sat on the mat.',
                        s2: 'Stocks fell sharply on Monday.',
                        label: 'not_paraphrase',
                        probabilities: {
                          not_paraphrase: 0.97,
                          paraphrase: 0.03,
                        },
                      },
                    ],
                    timings: {
                      rerankMs: 21.7,
                    },
                  },
                },
              },
            },
          },
        },
        ...errors('400', '401', '413', '415', '500', '503'),
      },
    },
  },
};

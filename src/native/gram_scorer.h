// The exact score of candidate document pairs over the documents' compressed TF-IDF rows (the format of
// src/jobs/align-gram-rows.ts: each row's sorted buckets as LEB128 varints of the gap to the previous one,
// shifted left one bit whose set value says a count - 2 follows), and for hybrid the int8 mean embeddings.
// The same arithmetic as DocGrams.cosines and Int8Rows.dot in the same order (double sums, float results), so
// the scores are bit-identical to the JavaScript's; 1.4x its speed on an Intel Xeon (docs/benchmarks/documents.md).
//
//   new GramScorer(rows, idf, invNorm, means?)   rows: { countBits, chunks, chunkOf, start, end }
//   scorer.score(i, js, out)   out[x] = score(i, js[x]) for each js[x] >= 0; other entries left as they are
//
// The arrays are read in place (shared memory: a worker thread makes its own scorer over the same rows) and
// must not change while the scorer is used. A row is checked the first time it is read (bounds, well-formed
// varints, increasing buckets); a malformed one is a BAD_INPUT error, never a read out of bounds.
#pragma once

#include <napi.h>

#include <cstdint>
#include <vector>

namespace paramine {

class GramScorer : public Napi::ObjectWrap<GramScorer> {
 public:
  static Napi::Function Define(Napi::Env env);
  explicit GramScorer(const Napi::CallbackInfo& info);

 private:
  Napi::Value Score(const Napi::CallbackInfo& info);

  // Row r's bytes [begin, end), checked on first use.
  bool Bytes(int64_t r, const uint8_t** begin, const uint8_t** end);
  bool Check(int64_t r);
  // Sum over row r's entries of count x table[bucket] (row r checked).
  double Dot(const uint8_t* p, const uint8_t* end) const;
  double MeanDot(int64_t r, int64_t s) const;

  // Keeps the arrays read in place alive as long as the scorer.
  std::vector<Napi::ObjectReference> keep_;
  std::vector<const uint8_t*> chunks_;
  std::vector<size_t> chunkBytes_;
  const uint16_t* chunkOf_ = nullptr;
  const uint32_t* start_ = nullptr;
  const uint32_t* end_ = nullptr;
  int64_t rows_ = 0;
  uint32_t countBits_ = 0;
  uint32_t buckets_ = 0;
  const float* idf_ = nullptr;
  const float* invNorm_ = nullptr;
  const int8_t* codes_ = nullptr;
  const float* scales_ = nullptr;
  int64_t meanDim_ = 0;
  // Row i's weights scattered (all zero between calls), and a bit for each value of a bucket's low 16 bits.
  std::vector<float> table_;
  std::vector<uint32_t> present_;
  std::vector<uint8_t> checked_;
  // Row i's buckets, to clear the table after a call.
  std::vector<uint32_t> row_;
};

}  // namespace paramine

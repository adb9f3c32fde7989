// Search through the composite index with per-call parameters. FAISS 1.7.3 rejects SearchParameters in
// IndexIDMap, IndexRefine and the fast-scan IVF, so the wrappers are walked here: each layer does what its
// FAISS search would do, and only the IVF layer receives SearchParametersIVF.
#pragma once

#include <faiss/impl/IDSelector.h>

#include <vector>

#include "state.h"

namespace paramine {

struct SearchOptions {
  size_t nprobe = 0;    // 0: the index's own nprobe
  double kFactor = 0;   // refine stage: candidates per result; 0: the index's own k_factor
  int efSearch = 0;     // HNSW coarse quantizer: candidate list while finding the nprobe lists; 0: its own
  // Search only these ids (a group of a mining job): FAISS 1.7.3's SearchParameters::sel. The ids are
  // copied from JS; the selector over them is built on the worker thread.
  bool select = false;
  std::vector<idx_t> selectIds;
  // Skip these ids (deleted sentences): bit i of the caller's bitmap set excludes id i; ids past its end
  // are kept. The bitmap is borrowed from JS (the worker holds a reference), not copied.
  const uint8_t* excludeBits = nullptr;
  size_t excludeBytes = 0;
  const faiss::IDSelector* sel = nullptr;
};

// The selector a search runs with: the ids selected (if any) that the exclusion bitmap (if any) keeps.
struct SearchSelector : faiss::IDSelector {
  const faiss::IDSelector* inner = nullptr;
  const uint8_t* bits = nullptr;
  size_t bytes = 0;
  bool is_member(idx_t i) const override {
    if (inner != nullptr && !inner->is_member(i)) return false;
    const size_t byte = static_cast<size_t>(i) >> 3;
    return i < 0 || byte >= bytes || ((bits[byte] >> (i & 7)) & 1) == 0;
  }
};

void CompositeSearch(IndexState& st, const faiss::Index* index, idx_t n, const float* x, idx_t k,
                     float* distances, idx_t* labels, const SearchOptions& opts);

}  // namespace paramine

// Moving every vector of one index into another built from the same trained template.
#pragma once

#include <faiss/Index.h>

namespace paramine {

// Throws CodedError (BAD_INPUT) before touching either index when the two are not mergeable: FAISS 1.7.3
// has no merge for IndexRefine, and fast-scan merges throw inside an OpenMP region (process abort).
void CheckMergeable(const faiss::Index* into, const faiss::Index* from);

// Moves `from`'s vectors (and ids) into `into`; `from` ends empty, as with FAISS merge_from.
void MergeInto(faiss::Index* into, faiss::Index* from);

}  // namespace paramine

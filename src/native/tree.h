// Walking the composite index types that index_factory builds (IDMap, PreTransform, Refine, IVF, ...).
#pragma once

#include <faiss/Index.h>
#include <faiss/IndexIVF.h>

#include <string>

namespace paramine {

// The IVF layer under the wrappers, or nullptr for flat/graph indexes.
const faiss::IndexIVF* FindIVF(const faiss::Index* index);

// Whether an IndexPreTransform (OPQ, PCA, ...) sits above the IVF layer.
bool HasPreTransform(const faiss::Index* index);

// Whether add_with_ids keeps caller ids without an IDMap wrapper.
bool SupportsIds(const faiss::Index* index);

// Whether the tree contains a fast-scan IVF (block inverted lists: no merge, nprobe set on the index).
bool HasFastScan(const faiss::Index* index);

// A short human-readable shape, e.g. "IDMap(Refine(IVFPQ(nlist=1024,M=48,nbits=8),Flat))".
std::string Describe(const faiss::Index* index);

}  // namespace paramine

// Walking the composite index types that index_factory builds (IDMap, PreTransform, Refine, IVF, ...).
#pragma once

#include <faiss/Index.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVF.h>

#include <string>

namespace paramine {

// The IVF layer under the wrappers, or nullptr for flat/graph indexes.
const faiss::IndexIVF* FindIVF(const faiss::Index* index);

// The HNSW graph over the IVF centroids (IVF{n}_HNSW{M}), or nullptr for a flat coarse quantizer; the
// second form finds the IVF layer under the wrappers first.
faiss::IndexHNSW* HnswQuantizer(const faiss::IndexIVF* ivf);
faiss::IndexHNSW* HnswQuantizerOf(faiss::Index* index);

// FAISS's HNSW defaults (efConstruction 40, efSearch 16) assign clustered data badly at many lists: in the
// 10^7 generator build (65,536 lists) 31% of vectors went to a list other than their nearest and 2.5% to
// one outside the 256 nearest, which capped recall@10 at ~0.79 whatever the nprobe (docs/scale.md). A graph
// built with efConstruction 200 and assignments made with efSearch 32 put 99.8% in their nearest list.
constexpr int kQuantizerEfConstruction = 200;
constexpr int kAssignEfSearch = 32;

// Sets the graph's construction breadth on a freshly created index (before its centroids go in).
void TuneNewHnswQuantizer(faiss::Index* index);

// While alive, the HNSW coarse quantizer (if any) assigns with efSearch max(own, kAssignEfSearch): add and
// codebook training place vectors in lists; searches set their own. Callers hold the index exclusively.
class AssignmentEf {
 public:
  AssignmentEf(faiss::Index* index, int own);
  ~AssignmentEf();
  AssignmentEf(const AssignmentEf&) = delete;
  AssignmentEf& operator=(const AssignmentEf&) = delete;

 private:
  faiss::IndexHNSW* hnsw_;
  int saved_ = 0;
};

// Whether an IndexPreTransform (OPQ, PCA, ...) sits above the IVF layer.
bool HasPreTransform(const faiss::Index* index);

// Whether add_with_ids keeps caller ids without an IDMap wrapper.
bool SupportsIds(const faiss::Index* index);

// Whether the tree contains a fast-scan IVF (block inverted lists: no merge, nprobe set on the index).
bool HasFastScan(const faiss::Index* index);

// A short human-readable shape, e.g. "IDMap(Refine(IVFPQ(nlist=1024,M=48,nbits=8),Flat))".
std::string Describe(const faiss::Index* index);

}  // namespace paramine

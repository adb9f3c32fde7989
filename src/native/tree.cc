#include "tree.h"

#include <cxxabi.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVFFastScan.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexIVFPQFastScan.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/IndexRefine.h>
#include <faiss/IndexScalarQuantizer.h>

#include <algorithm>
#include <cstdlib>
#include <typeinfo>

namespace paramine {

const faiss::IndexIVF* FindIVF(const faiss::Index* index) {
  if (!index) return nullptr;
  if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(index)) return ivf;
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) return FindIVF(m->index);
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(index)) return FindIVF(p->index);
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(index)) return FindIVF(r->base_index);
  return nullptr;
}

faiss::IndexHNSW* HnswQuantizer(const faiss::IndexIVF* ivf) { return dynamic_cast<faiss::IndexHNSW*>(ivf->quantizer); }

faiss::IndexHNSW* HnswQuantizerOf(faiss::Index* index) {
  auto ivf = FindIVF(index);
  return ivf ? HnswQuantizer(ivf) : nullptr;
}

void TuneNewHnswQuantizer(faiss::Index* index) {
  if (auto hnsw = HnswQuantizerOf(index)) hnsw->hnsw.efConstruction = kQuantizerEfConstruction;
}

AssignmentEf::AssignmentEf(faiss::Index* index, int own) : hnsw_(HnswQuantizerOf(index)) {
  if (!hnsw_) return;
  saved_ = hnsw_->hnsw.efSearch;
  hnsw_->hnsw.efSearch = std::max(own, kAssignEfSearch);
}

AssignmentEf::~AssignmentEf() {
  if (hnsw_) hnsw_->hnsw.efSearch = saved_;
}

bool HasPreTransform(const faiss::Index* index) {
  if (!index) return false;
  if (dynamic_cast<const faiss::IndexPreTransform*>(index)) return true;
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) return HasPreTransform(m->index);
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(index)) return HasPreTransform(r->base_index);
  return false;
}

bool SupportsIds(const faiss::Index* index) {
  if (dynamic_cast<const faiss::IndexIVF*>(index)) return true;
  if (dynamic_cast<const faiss::IndexIDMap*>(index)) return true;
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(index)) return SupportsIds(p->index);
  return false;
}

bool HasFastScan(const faiss::Index* index) {
  if (!index) return false;
  if (dynamic_cast<const faiss::IndexIVFFastScan*>(index)) return true;
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) return HasFastScan(m->index);
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(index)) return HasFastScan(p->index);
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(index)) {
    return HasFastScan(r->base_index) || HasFastScan(r->refine_index);
  }
  return false;
}

static std::string Demangled(const faiss::Index* index) {
  int status = 0;
  const char* mangled = typeid(*index).name();
  char* name = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && name ? name : mangled;
  std::free(name);
  const std::string prefix = "faiss::";
  if (out.rfind(prefix, 0) == 0) out = out.substr(prefix.size());
  return out;
}

// ",quantizer=HNSW32" for an HNSW coarse quantizer; nothing for the flat one.
static std::string QuantizerSuffix(const faiss::IndexIVF* ivf) {
  auto hnsw = dynamic_cast<const faiss::IndexHNSW*>(ivf->quantizer);
  if (!hnsw) return "";
  // Level-0 nodes have 2*M neighbours in FAISS's HNSW.
  return ",quantizer=HNSW" + std::to_string(hnsw->hnsw.nb_neighbors(1));
}

std::string Describe(const faiss::Index* index) {
  if (!index) return "null";
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) return "IDMap(" + Describe(m->index) + ")";
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(index)) {
    return "PreTransform(" + std::to_string(p->chain.size()) + "," + Describe(p->index) + ")";
  }
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(index)) {
    return "Refine(" + Describe(r->base_index) + "," + Describe(r->refine_index) + ")";
  }
  if (auto fs = dynamic_cast<const faiss::IndexIVFPQFastScan*>(index)) {
    return "IVFPQFastScan(nlist=" + std::to_string(fs->nlist) + ",M=" + std::to_string(fs->pq.M) +
           ",nbits=" + std::to_string(fs->pq.nbits) + QuantizerSuffix(fs) + ")";
  }
  if (auto pq = dynamic_cast<const faiss::IndexIVFPQ*>(index)) {
    return "IVFPQ(nlist=" + std::to_string(pq->nlist) + ",M=" + std::to_string(pq->pq.M) +
           ",nbits=" + std::to_string(pq->pq.nbits) + QuantizerSuffix(pq) + ")";
  }
  if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(index)) {
    return Demangled(index) + "(nlist=" + std::to_string(ivf->nlist) + QuantizerSuffix(ivf) + ")";
  }
  if (dynamic_cast<const faiss::IndexFlat*>(index)) return "Flat";
  return Demangled(index);
}

}  // namespace paramine

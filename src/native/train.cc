#include "train.h"

#include <faiss/Clustering.h>
#include <faiss/IndexFlat.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexIVFPQ.h>
#include <faiss/IndexIVFPQFastScan.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/IndexRefine.h>
#include <faiss/VectorTransform.h>
#include <faiss/utils/distances.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "errors.h"
#include "tree.h"

namespace paramine {

namespace {

// The refine stage under an optional IDMap, or null.
faiss::IndexRefine* RefineOf(faiss::Index* index) {
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(index)) index = m->index;
  return dynamic_cast<faiss::IndexRefine*>(index);
}

// The pre-transform under optional IDMap / Refine wrappers, or null.
faiss::IndexPreTransform* PreTransformOf(faiss::Index* index) {
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(index)) index = m->index;
  if (auto r = dynamic_cast<faiss::IndexRefine*>(index)) index = r->base_index;
  return dynamic_cast<faiss::IndexPreTransform*>(index);
}

// The nearest centroid of each point for FAISS's k-means over PQ sub-vectors (8-d at PQ48 x 384): its
// IndexFlatL2 sends such short vectors through BLAS (an 8-deep product, then a scalar scan of every
// distance), where the SIMD kernel that scores eight centroids at once is several times faster.
class NearestCentroidL2 : public faiss::IndexFlatL2 {
 public:
  explicit NearestCentroidL2(idx_t dim) : faiss::IndexFlatL2(dim) {}

  void search(idx_t n, const float* x, idx_t k, float* distances, idx_t* labels,
              const faiss::SearchParameters* params = nullptr) const override {
    if (k != 1 || params != nullptr || d > 32 || ntotal == 0) {
      faiss::IndexFlatL2::search(n, x, k, distances, labels, params);
      return;
    }
    const float* y = get_xb();
#pragma omp parallel
    {
      std::vector<float> scratch(ntotal);
#pragma omp for
      for (idx_t i = 0; i < n; i++) {
        const size_t best = faiss::fvec_L2sqr_ny_nearest(scratch.data(), x + i * d, y, d, ntotal);
        labels[i] = static_cast<idx_t>(best);
        distances[i] = scratch[best];
      }
    }
  }
};

// The IVF layer's product quantizer (8-bit or fast-scan), or null.
faiss::ProductQuantizer* ProductQuantizerOf(faiss::IndexIVF* ivf) {
  if (auto pq = dynamic_cast<faiss::IndexIVFPQ*>(ivf)) return &pq->pq;
  if (auto fs = dynamic_cast<faiss::IndexIVFPQFastScan*>(ivf)) return &fs->pq;
  return nullptr;
}

// Points the PQ's k-means at `assigner` for one scope (FAISS does not own it).
class PqAssignment {
 public:
  PqAssignment(faiss::ProductQuantizer* pq, faiss::Index* assigner) : pq_(pq) {
    if (pq_) pq_->assign_index = assigner;
  }
  ~PqAssignment() {
    if (pq_) pq_->assign_index = nullptr;
  }
  PqAssignment(const PqAssignment&) = delete;
  PqAssignment& operator=(const PqAssignment&) = delete;

 private:
  faiss::ProductQuantizer* pq_;
};

bool ChainTrained(const faiss::IndexPreTransform* p) {
  for (auto* vt : p->chain) {
    if (!vt->is_trained) return false;
  }
  return true;
}

// The IVF layer that the step-wise training can drive: IVF under optional IDMap / Refine / PreTransform.
faiss::IndexIVF* SteppableIVF(IndexState& st, const char* op) {
  faiss::Index* index = st.index.get();
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(index)) index = m->index;
  if (auto r = dynamic_cast<faiss::IndexRefine*>(index)) index = r->base_index;
  if (auto p = dynamic_cast<faiss::IndexPreTransform*>(index)) index = p->index;
  auto ivf = dynamic_cast<faiss::IndexIVF*>(index);
  if (!ivf) {
    throw CodedError("BAD_INPUT", std::string(op) +
                                      ": step-wise training needs an IVF index (optionally under a pre-transform or "
                                      "refine stage); use train() for this factory");
  }
  return ivf;
}

// Wrappers copy is_trained from what they wrap.
void PropagateTrained(faiss::Index* index) {
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(index)) {
    PropagateTrained(m->index);
    m->is_trained = m->index->is_trained;
  } else if (auto r = dynamic_cast<faiss::IndexRefine*>(index)) {
    PropagateTrained(r->base_index);
    r->is_trained = r->base_index->is_trained && r->refine_index->is_trained;
  } else if (auto p = dynamic_cast<faiss::IndexPreTransform*>(index)) {
    PropagateTrained(p->index);
    p->is_trained = p->index->is_trained && ChainTrained(p);
  }
}

void CheckFresh(const IndexState& st, const char* op) {
  CheckOpen(st);
  CheckWritable(st, op);
  if (st.index->ntotal > 0) throw CodedError("CONFLICT", std::string(op) + ": the index already holds vectors");
  if (st.index->is_trained) throw CodedError("CONFLICT", std::string(op) + ": the index is already trained");
}

class TrainInputStagesWorker : public IndexWorker {
 public:
  TrainInputStagesWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n)
      : IndexWorker(env, std::move(st)), x_(std::move(x)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, st_->dim, "trainInputStages");
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckFresh(*st_, "trainInputStages");
    // IndexRefine::train trains its refine codes on the raw vectors too.
    if (faiss::IndexRefine* r = RefineOf(st_->index.get()); r && !r->refine_index->is_trained) {
      r->refine_index->train(n_, x_.data);
    }
    faiss::IndexPreTransform* p = PreTransformOf(st_->index.get());
    if (!p) return;  // nothing to learn before the IVF layer
    // As IndexPreTransform::train does: each transform learns on the output of the ones before it.
    const float* xt = x_.data;
    std::unique_ptr<const float[]> owned;
    for (size_t i = 0; i < p->chain.size(); i++) {
      faiss::VectorTransform* vt = p->chain[i];
      if (!vt->is_trained) vt->train(n_, xt);
      if (i + 1 < p->chain.size()) {
        const float* next = vt->apply(n_, xt);
        owned.reset(next);
        xt = next;
      }
    }
  }

  BorrowedFloats x_;
  idx_t n_;
};

class ApplyPreTransformWorker : public IndexWorker {
 public:
  ApplyPreTransformWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n)
      : IndexWorker(env, std::move(st)), x_(std::move(x)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, st_->dim, "applyPreTransform");
    std::shared_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    faiss::IndexPreTransform* p = PreTransformOf(st_->index.get());
    if (!p) {
      out_.assign(x_.data, x_.data + x_.length);
      return;
    }
    if (!ChainTrained(p)) {
      throw CodedError("INDEX_NOT_TRAINED", "applyPreTransform: the pre-transform is not trained");
    }
    const float* xt = p->apply_chain(n_, x_.data);
    out_.assign(xt, xt + n_ * p->index->d);
    if (xt != x_.data) delete[] xt;
  }

  Napi::Value Result(Napi::Env env) override {
    auto arr = Napi::Float32Array::New(env, out_.size());
    if (!out_.empty()) std::memcpy(arr.Data(), out_.data(), out_.size() * sizeof(float));
    return arr;
  }

  BorrowedFloats x_;
  idx_t n_;
  std::vector<float> out_;
};

class SetCentroidsWorker : public IndexWorker {
 public:
  SetCentroidsWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats c, idx_t n)
      : IndexWorker(env, std::move(st)), c_(std::move(c)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(c_.data, c_.length, st_->coarseDim, "setCentroids");
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckFresh(*st_, "setCentroids");
    faiss::IndexIVF* ivf = SteppableIVF(*st_, "setCentroids");
    if (static_cast<size_t>(n_) != ivf->nlist) {
      throw CodedError("BAD_INPUT", "setCentroids: " + std::to_string(n_) + " centroids for " +
                                        std::to_string(ivf->nlist) + " lists");
    }
    // An HNSW quantizer builds its graph here (the slow part for hundreds of thousands of lists).
    ivf->quantizer->reset();
    ivf->quantizer->add(n_, c_.data);
    ivf->quantizer->is_trained = true;
  }

  BorrowedFloats c_;
  idx_t n_;
};

class TrainCodesWorker : public IndexWorker {
 public:
  TrainCodesWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n)
      : IndexWorker(env, std::move(st)), x_(std::move(x)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, st_->coarseDim, "trainCodes");
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckFresh(*st_, "trainCodes");
    faiss::IndexIVF* ivf = SteppableIVF(*st_, "trainCodes");
    if (ivf->quantizer->ntotal != static_cast<idx_t>(ivf->nlist)) {
      throw CodedError("INDEX_NOT_TRAINED", "trainCodes: set the coarse centroids first (setCentroids)");
    }
    auto p = PreTransformOf(st_->index.get());
    auto r = RefineOf(st_->index.get());
    if ((p && !ChainTrained(p)) || (r && !r->refine_index->is_trained)) {
      throw CodedError("INDEX_NOT_TRAINED", "trainCodes: train the input stages first (trainInputStages)");
    }
    AssignmentEf assignment(st_->index.get(), st_->quantizerEf);
    faiss::ProductQuantizer* pq = ProductQuantizerOf(ivf);
    NearestCentroidL2 nearest(pq ? static_cast<idx_t>(pq->dsub) : 1);
    PqAssignment pqAssignment(pq, &nearest);
    ivf->train_residual(n_, x_.data);
    ivf->is_trained = true;
    PropagateTrained(st_->index.get());
    st_->Refresh();
  }

  BorrowedFloats x_;
  idx_t n_;
};

class KmeansWorker : public IndexWorker {
 public:
  KmeansWorker(Napi::Env env, BorrowedFloats x, idx_t n, int dim, int k, KmeansOptions opts)
      : IndexWorker(env, nullptr), x_(std::move(x)), n_(n), dim_(dim), k_(k), opts_(opts) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, dim_, "kmeans");
    if (n_ < k_) {
      throw CodedError("BAD_INPUT", "kmeans: " + std::to_string(n_) + " points for " + std::to_string(k_) +
                                        " centroids; need at least one per centroid");
    }
    faiss::ClusteringParameters cp;
    cp.niter = opts_.niter;
    cp.seed = opts_.seed;
    cp.spherical = opts_.spherical;
    cp.max_points_per_centroid = opts_.maxPointsPerCentroid;
    cp.min_points_per_centroid = 1;  // the caller sizes the sample; FAISS would only print a warning
    cp.verbose = false;
    faiss::Clustering clus(dim_, k_, cp);
    std::unique_ptr<faiss::IndexFlat> assigner;
    if (opts_.spherical) {
      assigner.reset(new faiss::IndexFlatIP(dim_));
    } else {
      assigner.reset(new faiss::IndexFlatL2(dim_));
    }
    clus.train(n_, x_.data, *assigner);
    centroids_ = std::move(clus.centroids);
  }

  Napi::Value Result(Napi::Env env) override {
    auto arr = Napi::Float32Array::New(env, centroids_.size());
    std::memcpy(arr.Data(), centroids_.data(), centroids_.size() * sizeof(float));
    return arr;
  }

  BorrowedFloats x_;
  idx_t n_;
  int dim_, k_;
  KmeansOptions opts_;
  std::vector<float> centroids_;
};

bool IsFloat32(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float32_array;
}

int IntArg(const Napi::Value& v, const char* what, int lo, int hi) {
  double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(d) || d != std::floor(d) || d < lo || d > hi) {
    throw CodedError("BAD_INPUT", std::string("kmeans: ") + what + " must be an integer in [" + std::to_string(lo) +
                                      ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(d);
}

}  // namespace

Napi::Promise QueueTrainInputStages(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n) {
  return QueueWorker<TrainInputStagesWorker>(env, std::move(st), std::move(x), n);
}
Napi::Promise QueueApplyPreTransform(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n) {
  return QueueWorker<ApplyPreTransformWorker>(env, std::move(st), std::move(x), n);
}
Napi::Promise QueueSetCentroids(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats c, idx_t n) {
  return QueueWorker<SetCentroidsWorker>(env, std::move(st), std::move(c), n);
}
Napi::Promise QueueTrainCodes(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n) {
  return QueueWorker<TrainCodesWorker>(env, std::move(st), std::move(x), n);
}

Napi::Value Kmeans(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    if (!IsFloat32(info[0])) throw CodedError("BAD_INPUT", "kmeans: points must be a Float32Array");
    const int dim = IntArg(info[1], "dim", 1, 65536);
    const int k = IntArg(info[2], "k", 1, 1 << 24);
    KmeansOptions opts;
    if (info.Length() > 3 && info[3].IsObject()) {
      Napi::Object o = info[3].As<Napi::Object>();
      if (o.Has("niter")) opts.niter = IntArg(o.Get("niter"), "niter", 1, 1000);
      if (o.Has("seed")) opts.seed = IntArg(o.Get("seed"), "seed", -(1 << 30), 1 << 30);
      if (o.Has("maxPointsPerCentroid")) {
        opts.maxPointsPerCentroid = IntArg(o.Get("maxPointsPerCentroid"), "maxPointsPerCentroid", 1, 1 << 20);
      }
      opts.spherical = o.Has("spherical") && o.Get("spherical").ToBoolean().Value();
    }
    auto arr = info[0].As<Napi::Float32Array>();
    if (arr.ElementLength() % dim != 0 || arr.ElementLength() == 0) {
      throw CodedError("BAD_INPUT", "kmeans: length " + std::to_string(arr.ElementLength()) +
                                        " is not a positive multiple of dim " + std::to_string(dim));
    }
    BorrowedFloats x;
    x.ref = Napi::Persistent(info[0]);
    x.data = arr.Data();
    x.length = arr.ElementLength();
    const idx_t n = static_cast<idx_t>(x.length / dim);
    return QueueWorker<KmeansWorker>(env, std::move(x), n, dim, k, opts);
  } catch (const CodedError& e) {
    return Rejected(env, e.code(), e.what());
  }
}

}  // namespace paramine

#include "search.h"

#include "errors.h"
#include "tree.h"

#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVFFastScan.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/IndexRefine.h>
#include <faiss/impl/DistanceComputer.h>
#include <omp.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <exception>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace paramine {

void ProbeGate::Enter(size_t* nprobeField, size_t want, int* efField, int wantEf) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!efField) wantEf = 0;
  auto fits = [&] { return active_ == 0 || (current_ == want && currentEf_ == wantEf); };
  if (!queue_.empty() || !fits()) {
    const uint64_t me = nextTicket_++;
    queue_.push_back(me);
    cv_.wait(lock, [&] { return queue_.front() == me && fits(); });
    queue_.pop_front();
    cv_.notify_all();  // the next in line may share these settings
  }
  if (active_ == 0) {
    if (nprobeField) *nprobeField = want;
    current_ = want;
    if (efField) *efField = wantEf;
    currentEf_ = wantEf;
  }
  active_++;
}

void ProbeGate::Leave() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--active_ == 0) cv_.notify_all();
}

namespace {

struct GateGuard {
  ProbeGate& gate;
  GateGuard(ProbeGate& g, size_t* field, size_t want, int* efField, int wantEf) : gate(g) {
    gate.Enter(field, want, efField, wantEf);
  }
  ~GateGuard() { gate.Leave(); }
};

// The HNSW quantizer's beam for a search: the query's efSearch, else the index's own, and never below the
// number of lists wanted (HNSW returns at most max(efSearch, k) results).
int QuantizerBeam(const IndexState& st, const SearchOptions& opts, size_t want) {
  return std::max<int>(opts.efSearch > 0 ? opts.efSearch : st.quantizerEf, int(want));
}

float WorstDistance(faiss::MetricType metric) {
  return metric == faiss::METRIC_INNER_PRODUCT ? -FLT_MAX : FLT_MAX;
}

// Re-scores the base layer's candidates with the refine index and keeps the best k (IndexRefine::search).
void Refine(const faiss::IndexRefine* r, idx_t n, const float* x, idx_t k, idx_t kBase, const idx_t* baseLabels,
            float* distances, idx_t* labels) {
  const bool ip = r->metric_type == faiss::METRIC_INNER_PRODUCT;
  const float worst = WorstDistance(r->metric_type);
  std::exception_ptr failure;
  std::mutex failureMu;
#pragma omp parallel if (n > 1)
  {
    try {
      std::unique_ptr<faiss::DistanceComputer> dc(r->refine_index->get_distance_computer());
      std::vector<std::pair<float, idx_t>> cand;
#pragma omp for
      for (idx_t i = 0; i < n; i++) {
        dc->set_query(x + i * r->d);
        cand.clear();
        for (idx_t j = 0; j < kBase; j++) {
          idx_t id = baseLabels[i * kBase + j];
          if (id >= 0) cand.emplace_back((*dc)(id), id);
        }
        const size_t keep = std::min<size_t>(cand.size(), static_cast<size_t>(k));
        auto better = [ip](const std::pair<float, idx_t>& a, const std::pair<float, idx_t>& b) {
          if (a.first != b.first) return ip ? a.first > b.first : a.first < b.first;
          return a.second < b.second;
        };
        std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(), better);
        for (idx_t j = 0; j < k; j++) {
          const bool have = static_cast<size_t>(j) < keep;
          distances[i * k + j] = have ? cand[j].first : worst;
          labels[i * k + j] = have ? cand[j].second : -1;
        }
      }
    } catch (...) {
      // Exceptions must not leave an OpenMP region (std::terminate); rethrow after it.
      std::lock_guard<std::mutex> lock(failureMu);
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

// The caller's selector names external ids; under an IndexIDMap the inner index sees positions.
struct TranslatedSelector : faiss::IDSelector {
  const std::vector<idx_t>& idMap;
  const faiss::IDSelector* inner;
  TranslatedSelector(const std::vector<idx_t>& m, const faiss::IDSelector* s) : idMap(m), inner(s) {}
  bool is_member(idx_t i) const override {
    return i >= 0 && static_cast<size_t>(i) < idMap.size() && inner->is_member(idMap[i]);
  }
};

}  // namespace

void CompositeSearch(IndexState& st, const faiss::Index* index, idx_t n, const float* x, idx_t k,
                     float* distances, idx_t* labels, const SearchOptions& opts) {
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) {
    if (opts.sel != nullptr) {
      TranslatedSelector translated(m->id_map, opts.sel);
      SearchOptions inner = opts;
      inner.sel = &translated;
      CompositeSearch(st, m->index, n, x, k, distances, labels, inner);
    } else {
      CompositeSearch(st, m->index, n, x, k, distances, labels, opts);
    }
    const idx_t size = static_cast<idx_t>(m->id_map.size());
    for (idx_t i = 0; i < n * k; i++) {
      if (labels[i] >= 0) labels[i] = labels[i] < size ? m->id_map[labels[i]] : -1;
    }
    return;
  }
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(index)) {
    const float* xt = p->apply_chain(n, x);
    std::unique_ptr<const float[]> owned(xt == x ? nullptr : xt);
    CompositeSearch(st, p->index, n, xt, k, distances, labels, opts);
    return;
  }
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(index)) {
    const double factor = opts.kFactor > 0 ? opts.kFactor : std::max(1.0f, r->k_factor);
    const idx_t kBase = std::max<idx_t>(k, static_cast<idx_t>(std::ceil(k * factor)));
    std::vector<float> baseDistances(n * kBase);
    std::vector<idx_t> baseLabels(n * kBase);
    CompositeSearch(st, r->base_index, n, x, kBase, baseDistances.data(), baseLabels.data(), opts);
    Refine(r, n, x, k, kBase, baseLabels.data(), distances, labels);
    return;
  }
  if (auto fs = dynamic_cast<const faiss::IndexIVFFastScan*>(index)) {
    if (opts.sel != nullptr) {
      throw CodedError("BAD_INPUT", "search: fast-scan indexes take no id selector in FAISS 1.7.3");
    }
    const size_t want = std::min(fs->nlist, opts.nprobe > 0 ? opts.nprobe : fs->nprobe);
    faiss::IndexHNSW* hnsw = HnswQuantizer(fs);
    const int ef = hnsw ? QuantizerBeam(st, opts, want) : 0;
    GateGuard guard(st.probeGate, &const_cast<faiss::IndexIVFFastScan*>(fs)->nprobe, want,
                    hnsw ? &hnsw->hnsw.efSearch : nullptr, ef);
    fs->search(n, x, k, distances, labels);
    return;
  }
  if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(index)) {
    faiss::SearchParametersIVF params;
    params.nprobe = std::min(ivf->nlist, opts.nprobe > 0 ? opts.nprobe : ivf->nprobe);
    params.sel = const_cast<faiss::IDSelector*>(opts.sel);
    faiss::SearchParametersHNSW quantizerParams;
    std::optional<GateGuard> guard;
    if (faiss::IndexHNSW* hnsw = HnswQuantizer(ivf)) {
      quantizerParams.efSearch = QuantizerBeam(st, opts, params.nprobe);
      params.quantizer_params = &quantizerParams;
      // FAISS 1.7.3's HNSW::search sizes its beam from the graph's own efSearch, not the parameters' (which
      // only bound its steps): without this, efSearch above the stored 16 or nprobe changed nothing.
      guard.emplace(st.probeGate, nullptr, 0, &hnsw->hnsw.efSearch, quantizerParams.efSearch);
    }
    ivf->search(n, x, k, distances, labels, &params);
    return;
  }
  if (opts.sel != nullptr) {
    faiss::SearchParameters params;
    params.sel = const_cast<faiss::IDSelector*>(opts.sel);
    index->search(n, x, k, distances, labels, &params);
    return;
  }
  index->search(n, x, k, distances, labels);
}

}  // namespace paramine

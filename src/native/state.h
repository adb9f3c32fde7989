// One open index and everything that guards it. Shared (shared_ptr) between the JS object and the async
// workers that use it, so a garbage-collected wrapper never frees an index a worker is still reading.
#pragma once

#include <faiss/Index.h>
#include <napi.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

namespace paramine {

using idx_t = faiss::Index::idx_t;

// Threads FAISS may use per operation. OpenMP's thread count is per calling thread, so every worker applies
// it before calling into FAISS (setting it once on the main thread would not reach the libuv pool).
extern std::atomic<int> g_threads;

// Fast-scan IVF indexes reject per-call SearchParameters in FAISS 1.7.3 and read `nprobe` (and their HNSW
// quantizer's efSearch) from the index itself. Searches with the same settings share the index; a search
// with other settings waits until the running ones finish, then sets the fields.
class ProbeGate {
 public:
  // nprobeField may be null (the IVF search takes nprobe as a parameter); efField may be null (no HNSW
  // quantizer), wantEf is then ignored.
  void Enter(size_t* nprobeField, size_t want, int* efField, int wantEf);
  void Leave();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int active_ = 0;
  size_t current_ = 0;
  int currentEf_ = 0;
  // Searches waiting, in arrival order: one whose settings differ waits for the searches running when it
  // came, not for every later one with the running settings (those queue behind it).
  std::deque<uint64_t> queue_;
  uint64_t nextTicket_ = 0;
};

struct IndexState {
  std::unique_ptr<faiss::Index> index;
  // Searches and writes share; train, add, merge take it exclusively.
  std::shared_mutex rw;
  ProbeGate probeGate;

  int dim = 0;
  faiss::MetricType metric = faiss::METRIC_INNER_PRODUCT;
  std::string factory;        // factory string given at creation ("" when read from a file)
  bool readOnly = false;      // opened with mmap: inverted lists are a read-only view of the file
  bool needsTraining = true;  // false for indexes that are born trained (Flat): train() is then a no-op
  std::string structure;      // Describe() of the tree, fixed after creation
  int64_t nlist = -1;         // IVF list count, -1 when not IVF
  int coarseDim = 0;          // dimension the IVF layer works in (after an OPQ/PCA pre-transform), else dim
  bool hnswQuantizer = false; // IVF{n}_HNSW{M}: the coarse quantizer is an HNSW graph over the centroids
  // The HNSW quantizer's own efSearch when created or loaded: the default of searches that name none.
  // Searches overwrite the graph's field (FAISS 1.7.3 sizes its beam from it), so it is kept here.
  int quantizerEf = 0;
  bool preTransform = false;  // an OPQ / PCA transform comes before the IVF layer

  // Mirrors of index fields so getters never wait for a lock held by a long add.
  std::atomic<int64_t> ntotal{0};
  std::atomic<bool> trained{false};

  // Main thread only: operations accepted and not yet settled, and close() promises waiting for them.
  bool closing = false;
  bool closed = false;
  int pending = 0;
  std::vector<Napi::Promise::Deferred> closeWaiters;

  void Refresh() {
    ntotal = index ? static_cast<int64_t>(index->ntotal) : 0;
    trained = index ? index->is_trained : false;
  }
};

// Computes structure and nlist from the index tree.
void FillShape(IndexState& st);

// Frees the index once nothing is in flight; resolves close() promises. Main thread only.
void MaybeFinishClose(Napi::Env env, IndexState& st);

}  // namespace paramine

// The async operations: each runs FAISS on a libuv pool thread (Napi::AsyncWorker) and settles a Promise.
#pragma once

#include <napi.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "errors.h"
#include "search.h"
#include "state.h"

namespace paramine {

// Largest k per search, and largest candidate list a refine stage may ask of its base layer.
constexpr int64_t kMaxK = 4096;
constexpr int64_t kMaxBaseK = 65536;
// Cap on n * k per call so a bad request cannot allocate gigabytes of results.
constexpr int64_t kMaxResults = int64_t(1) << 27;

// {distances: Float32Array, ids: BigInt64Array}: a search's results copied into JavaScript memory.
inline Napi::Object SearchResult(Napi::Env env, const std::vector<float>& distances,
                                 const std::vector<int64_t>& labels) {
  auto d = Napi::Float32Array::New(env, distances.size());
  auto ids = Napi::BigInt64Array::New(env, labels.size());
  if (!distances.empty()) {
    std::memcpy(d.Data(), distances.data(), distances.size() * sizeof(float));
    std::memcpy(ids.Data(), labels.data(), labels.size() * sizeof(int64_t));
  }
  auto out = Napi::Object::New(env);
  out.Set("distances", d);
  out.Set("ids", ids);
  return out;
}

class IndexWorker : public Napi::AsyncWorker {
 public:
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  IndexWorker(Napi::Env env, std::shared_ptr<IndexState> st, std::shared_ptr<IndexState> other = nullptr);
  ~IndexWorker() override = default;

  virtual void Run() = 0;
  virtual Napi::Value Result(Napi::Env env) { return env.Undefined(); }

  std::shared_ptr<IndexState> st_;
  std::shared_ptr<IndexState> other_;
  const char* faissCode_ = "FAISS_ERROR";

 private:
  void Execute() final;
  void OnOK() final;
  void OnError(const Napi::Error& e) final;
  void Settle(Napi::Env env);

  Napi::Promise::Deferred deferred_;
  ErrorInfo error_;
};

// Vectors borrowed from JS: the reference keeps the buffer alive while a worker reads it. Callers must not
// modify or transfer the array until the promise settles.
struct BorrowedFloats {
  Napi::Reference<Napi::Value> ref;
  const float* data = nullptr;
  size_t length = 0;
};
struct BorrowedIds {
  Napi::Reference<Napi::Value> ref;
  const int64_t* data = nullptr;
  size_t length = 0;
};

Napi::Promise QueueTrain(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n);
Napi::Promise QueueAdd(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, BorrowedIds ids, idx_t n);
Napi::Promise QueueSearch(Napi::Env env, std::shared_ptr<IndexState> st, std::vector<float> queries, idx_t n,
                          idx_t k, SearchOptions opts, Napi::Reference<Napi::Value> exclude);
Napi::Promise QueueWrite(Napi::Env env, std::shared_ptr<IndexState> st, std::string path);
Napi::Promise QueueClone(Napi::Env env, std::shared_ptr<IndexState> st);
Napi::Promise QueueMerge(Napi::Env env, std::shared_ptr<IndexState> into, std::shared_ptr<IndexState> from);
// Whether removeIds can drop vectors from this index's structure (remove.cc).
bool CanRemoveIds(const faiss::Index* index, bool mapped);
Napi::Promise QueueRemove(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedIds ids);
Napi::Promise QueueRead(Napi::Env env, std::string path, bool mmap);

// Checks shared by the workers (throw CodedError).
void CheckFinite(const float* x, size_t count, int dim, const char* what);
void CheckOpen(const IndexState& st);
void CheckWritable(const IndexState& st, const char* op);

// Starts worker W on the libuv pool; the worker deletes itself after settling its promise.
template <typename W, typename... Args>
Napi::Promise QueueWorker(Napi::Env env, Args&&... args) {
  auto* worker = new W(env, std::forward<Args>(args)...);
  Napi::Promise promise = worker->Promise();
  worker->Queue();
  return promise;
}

}  // namespace paramine

// Module entry: createIndex, readIndex, thread control and limits. See index_object.cc for the class.
#include <faiss/Index.h>
#include <faiss/IndexIDMap.h>
#include <faiss/index_factory.h>
#include <napi.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "distance_kernels.h"
#include "errors.h"
#include "gram_scorer.h"
#include "half_vectors.h"
#include "index_object.h"
#include "train.h"
#include "tree.h"
#include "workers.h"

extern "C" void openblas_set_num_threads(int num_threads);

namespace paramine {

Napi::Value MapFile(const Napi::CallbackInfo& info);  // mmap.cc
Napi::Value DropMappedPages(const Napi::CallbackInfo& info);  // mmap.cc

std::atomic<int> g_threads{2};
static int g_blasThreads = 1;

namespace {

// OpenBLAS runs its own pthread pool next to OpenMP's; on a few shared cores the two pools spin against
// each other (measured: IVF1024,PQ48np training 2x slower, half of it in sched_yield). FAISS parallelizes
// with OpenMP itself, so BLAS gets one thread unless asked otherwise.
void ApplyThreads(int n, int blas) {
  g_threads = n;
  omp_set_num_threads(n);
  openblas_set_num_threads(blas);
  g_blasThreads = blas;
}

int EnvInt(const char* name, int fallback) {
  const char* s = std::getenv(name);
  if (!s) return fallback;
  int v = std::atoi(s);
  return v >= 1 && v <= 1024 ? v : fallback;
}

// createIndex(factory: string, dim: number, metric: 'ip' | 'l2'): FaissIndex (synchronous: no training yet).
Napi::Value CreateIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) throw MakeError(env, "BAD_INPUT", "createIndex: factory must be a string");
  std::string factory = info[0].As<Napi::String>().Utf8Value();
  if (factory.empty() || factory.size() > 256) throw MakeError(env, "BAD_INPUT", "createIndex: bad factory string");
  double d = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(d) || d != std::floor(d) || d < 1 || d > 65536) {
    throw MakeError(env, "BAD_INPUT", "createIndex: dim must be an integer in [1, 65536]");
  }
  std::string metric = info[2].IsString() ? info[2].As<Napi::String>().Utf8Value() : "";
  if (metric != "ip" && metric != "l2") throw MakeError(env, "BAD_INPUT", "createIndex: metric must be 'ip' or 'l2'");

  auto st = std::make_shared<IndexState>();
  st->dim = static_cast<int>(d);
  st->metric = metric == "ip" ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;
  st->factory = factory;
  try {
    std::unique_ptr<faiss::Index> index(faiss::index_factory(st->dim, factory.c_str(), st->metric));
    // Ids are the caller's 64-bit ids everywhere; indexes that only number vectors get an id map.
    if (!SupportsIds(index.get())) {
      auto* map = new faiss::IndexIDMap(index.get());
      map->own_fields = true;
      index.release();
      index.reset(map);
    }
    TuneNewHnswQuantizer(index.get());
    st->index = std::move(index);
  } catch (...) {
    ErrorInfo e = CurrentError();
    throw MakeError(env, "BAD_INPUT", "createIndex: factory '" + factory + "' with dim " +
                                          std::to_string(st->dim) + ": " + e.message);
  }
  st->needsTraining = !st->index->is_trained;
  FillShape(*st);
  st->Refresh();
  return IndexObject::NewInstance(env, st);
}

// readIndex(path: string, options?: { mmap?: boolean }): Promise<FaissIndex>.
Napi::Value ReadIndex(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return Rejected(env, "BAD_INPUT", "readIndex: path must be a string");
  bool mmap = false;
  if (info.Length() > 1 && info[1].IsObject()) {
    Napi::Value m = info[1].As<Napi::Object>().Get("mmap");
    mmap = m.IsBoolean() && m.As<Napi::Boolean>().Value();
  }
  return QueueRead(env, info[0].As<Napi::String>().Utf8Value(), mmap);
}

int ThreadArg(const Napi::CallbackInfo& info, size_t i, int fallback) {
  if (info.Length() <= i || info[i].IsUndefined()) return fallback;
  double n = info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(n) || n != std::floor(n) || n < 1 || n > 1024) {
    throw MakeError(info.Env(), "BAD_INPUT", "setNumThreads: thread counts must be integers in [1, 1024]");
  }
  return static_cast<int>(n);
}

// setNumThreads(omp: number, blas?: number). Applies to operations started afterwards.
Napi::Value SetNumThreads(const Napi::CallbackInfo& info) {
  int n = ThreadArg(info, 0, -1);
  if (n < 0) throw MakeError(info.Env(), "BAD_INPUT", "setNumThreads: n is required");
  ApplyThreads(n, ThreadArg(info, 1, g_blasThreads));
  return info.Env().Undefined();
}

Napi::Value GetNumThreads(const Napi::CallbackInfo& info) {
  auto out = Napi::Object::New(info.Env());
  out.Set("omp", Napi::Number::New(info.Env(), g_threads.load()));
  out.Set("blas", Napi::Number::New(info.Env(), g_blasThreads));
  return out;
}

// checkDistanceKernels(): { linked, maxRelError, nearestMismatches } (distance_kernels.h).
Napi::Value CheckKernels(const Napi::CallbackInfo& info) {
  const KernelCheck c = CheckDistanceKernels();
  auto out = Napi::Object::New(info.Env());
  out.Set("linked", Napi::Boolean::New(info.Env(), c.linked));
  out.Set("maxRelError", Napi::Number::New(info.Env(), c.maxRelError));
  out.Set("nearestMismatches", Napi::Number::New(info.Env(), c.nearestMismatches));
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  // Two threads unless told otherwise: the service shares small machines with the encoder and reranker.
  ApplyThreads(EnvInt("PARAMINE_FAISS_THREADS", std::min(2, omp_get_num_procs())),
               EnvInt("PARAMINE_BLAS_THREADS", 1));
  exports.Set("FaissIndex", IndexObject::Define(env));
  exports.Set("HalfVectors", HalfVectors::Define(env));
  exports.Set("GramScorer", GramScorer::Define(env));
  exports.Set("kmeans", Napi::Function::New(env, Kmeans, "kmeans"));
  exports.Set("openHalfVectors", Napi::Function::New(env, OpenHalfVectors, "openHalfVectors"));
  exports.Set("createIndex", Napi::Function::New(env, CreateIndex, "createIndex"));
  exports.Set("readIndex", Napi::Function::New(env, ReadIndex, "readIndex"));
  exports.Set("mapFile", Napi::Function::New(env, MapFile, "mapFile"));
  exports.Set("dropMappedPages", Napi::Function::New(env, DropMappedPages, "dropMappedPages"));
  exports.Set("setNumThreads", Napi::Function::New(env, SetNumThreads, "setNumThreads"));
  exports.Set("getNumThreads", Napi::Function::New(env, GetNumThreads, "getNumThreads"));
  exports.Set("MAX_K", Napi::Number::New(env, static_cast<double>(kMaxK)));
  exports.Set("MAX_BASE_K", Napi::Number::New(env, static_cast<double>(kMaxBaseK)));
  exports.Set("distanceKernels", Napi::String::New(env, DistanceKernels()));
  exports.Set("checkDistanceKernels", Napi::Function::New(env, CheckKernels, "checkDistanceKernels"));
  exports.Set("faissVersion", Napi::String::New(env, std::to_string(FAISS_VERSION_MAJOR) + "." +
                                                         std::to_string(FAISS_VERSION_MINOR) + "." +
                                                         std::to_string(FAISS_VERSION_PATCH)));
  return exports;
}

}  // namespace

}  // namespace paramine

static Napi::Object InitModule(Napi::Env env, Napi::Object exports) { return paramine::Init(env, exports); }

NODE_API_MODULE(paramine_faiss, InitModule)

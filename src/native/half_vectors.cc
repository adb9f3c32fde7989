#include "half_vectors.h"

#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <utility>
#include <vector>

#include "distance_kernels.h"
#include "errors.h"
#include "instance.h"
#include "workers.h"

namespace paramine {

HalfMapping::~HalfMapping() {
  if (data) ::munmap(const_cast<uint16_t*>(data), bytes);
  if (fd >= 0) ::close(fd);
}

namespace {

class OpenWorker : public IndexWorker {
 public:
  OpenWorker(Napi::Env env, std::string path, int dim) : IndexWorker(env, nullptr), path_(std::move(path)), dim_(dim) {
    faissCode_ = "BAD_FILE";
  }

 private:
  void Run() override {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw CodedError(errno == ENOENT ? "FILE_NOT_FOUND" : "BAD_FILE", path_ + ": " + std::strerror(errno));
    }
    struct stat sb;
    if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
      ::close(fd);
      throw CodedError("BAD_FILE", path_ + ": not a regular file");
    }
    const size_t row = static_cast<size_t>(dim_) * 2;
    const size_t size = static_cast<size_t>(sb.st_size);
    if (size % row != 0) {
      ::close(fd);
      throw CodedError("BAD_FILE", path_ + ": " + std::to_string(size) + " bytes is not a whole number of " +
                                       std::to_string(dim_) + "-d half-float rows");
    }
    auto map = std::make_shared<HalfMapping>();
    map->dim = dim_;
    map->count = static_cast<int64_t>(size / row);
    map->bytes = size;
    map->path = path_;
    if (size > 0) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        const int err = errno;
        ::close(fd);
        throw CodedError("BAD_FILE", path_ + ": mmap failed: " + std::strerror(err));
      }
      // Candidates are scattered rows: read-ahead would only evict useful pages.
      ::madvise(p, size, MADV_RANDOM);
      map->data = static_cast<const uint16_t*>(p);
    }
    map->fd = fd;
    result_ = std::move(map);
  }

  Napi::Value Result(Napi::Env env) override { return HalfVectors::NewInstance(env, result_); }

  std::string path_;
  int dim_;
  std::shared_ptr<HalfMapping> result_;
};

struct Borrowed {
  Napi::Reference<Napi::Value> ref;
  const void* data = nullptr;
  size_t length = 0;
};

// Exact scores of each query's candidates from the half floats; the best k, best first (ties: smaller id).
class RescoreWorker : public IndexWorker {
 public:
  RescoreWorker(Napi::Env env, std::shared_ptr<HalfMapping> map, Borrowed q, Borrowed c, int64_t n, int64_t per,
                int64_t k, bool ip)
      : IndexWorker(env, nullptr), map_(std::move(map)), q_(std::move(q)), c_(std::move(c)), n_(n), per_(per),
        k_(k), ip_(ip) {}

 private:
  void Run() override {
    const auto* cand = static_cast<const int64_t*>(c_.data);
    for (size_t i = 0; i < c_.length; i++) {
      if (cand[i] >= map_->count) {
        throw CodedError("BAD_INPUT", "rescore: candidate id " + std::to_string(cand[i]) + " is past the " +
                                          std::to_string(map_->count) + " stored vectors");
      }
    }
    distances_.resize(n_ * k_);
    labels_.resize(n_ * k_);
    const int dim = map_->dim;
    const auto* queries = static_cast<const float*>(q_.data);
    const float worst = ip_ ? -FLT_MAX : FLT_MAX;
    std::exception_ptr failure;
    std::mutex failureMu;
#pragma omp parallel if (n_ > 1)
    {
      try {
        std::vector<std::pair<float, int64_t>> scored;
#pragma omp for
        for (int64_t i = 0; i < n_; i++) {
          const float* q = queries + i * dim;
          scored.clear();
          for (int64_t j = 0; j < per_; j++) {
            const int64_t id = cand[i * per_ + j];
            if (id < 0) continue;
            const uint16_t* row = map_->data + id * dim;
            scored.emplace_back(ip_ ? HalfInnerProduct(q, row, dim) : HalfL2sqr(q, row, dim), id);
          }
          // One id may come back from two shards only if a caller merged badly; keep the first.
          const size_t keep = std::min<size_t>(scored.size(), static_cast<size_t>(k_));
          auto better = [this](const std::pair<float, int64_t>& a, const std::pair<float, int64_t>& b) {
            if (a.first != b.first) return ip_ ? a.first > b.first : a.first < b.first;
            return a.second < b.second;
          };
          std::partial_sort(scored.begin(), scored.begin() + keep, scored.end(), better);
          for (int64_t j = 0; j < k_; j++) {
            const bool have = static_cast<size_t>(j) < keep;
            distances_[i * k_ + j] = have ? scored[j].first : worst;
            labels_[i * k_ + j] = have ? scored[j].second : -1;
          }
        }
      } catch (...) {
        std::lock_guard<std::mutex> lock(failureMu);
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
  }

  Napi::Value Result(Napi::Env env) override { return SearchResult(env, distances_, labels_); }

  std::shared_ptr<HalfMapping> map_;
  Borrowed q_, c_;
  int64_t n_, per_, k_;
  bool ip_;
  std::vector<float> distances_;
  std::vector<int64_t> labels_;
};

// Rows of the given ids as float32, written straight into the caller's array (allocated on the JS thread).
// Read with pread rather than through the map, so a build sampling rows from the whole file does not count
// every touched page in its resident set (the page cache holds them either way).
class GatherWorker : public IndexWorker {
 public:
  GatherWorker(Napi::Env env, std::shared_ptr<HalfMapping> map, Borrowed ids, Borrowed out)
      : IndexWorker(env, nullptr), map_(std::move(map)), ids_(std::move(ids)), out_(std::move(out)) {}

 private:
  void Run() override {
    const auto* ids = static_cast<const int64_t*>(ids_.data);
    for (size_t i = 0; i < ids_.length; i++) {
      if (ids[i] < 0 || ids[i] >= map_->count) {
        throw CodedError("BAD_INPUT", "gather: ids[" + std::to_string(i) + "] = " + std::to_string(ids[i]) +
                                          " is outside [0, " + std::to_string(map_->count) + ")");
      }
    }
    const size_t dim = static_cast<size_t>(map_->dim);
    const size_t rowBytes = dim * sizeof(uint16_t);
    // Consecutive ids (a document's sentences, a chunk of the file) in one pread of up to kRunRows rows: a
    // pread a row cost ~2.5 us (mostly the kernel's page-cache lookup and copy a call); runs of 1-7, 1.7-2.2.
    std::vector<uint16_t> rows(dim * kRunRows);
    float* out = const_cast<float*>(static_cast<const float*>(out_.data));
    for (size_t i = 0; i < ids_.length;) {
      size_t run = 1;
      while (run < kRunRows && i + run < ids_.length && ids[i + run] == ids[i] + static_cast<int64_t>(run)) run++;
      auto* dst = reinterpret_cast<char*>(rows.data());
      const size_t bytes = run * rowBytes;
      const off_t at = static_cast<off_t>(ids[i]) * static_cast<off_t>(rowBytes);
      for (size_t got = 0; got < bytes;) {
        const ssize_t r = ::pread(map_->fd, dst + got, bytes - got, at + static_cast<off_t>(got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
          throw CodedError("BAD_FILE", map_->path + ": " + (r < 0 ? std::strerror(errno) : "ended early (truncated?)"));
        }
        got += static_cast<size_t>(r);
      }
      for (size_t x = 0; x < run; x++) HalfToFloat(rows.data() + x * dim, out + (i + x) * dim, dim);
      i += run;
    }
  }

  static constexpr size_t kRunRows = 64;

  Napi::Value Result(Napi::Env env) override { return out_.ref.Value(); }

  std::shared_ptr<HalfMapping> map_;
  Borrowed ids_, out_;
};

}  // namespace

Napi::Function HalfVectors::Define(Napi::Env env) {
  Napi::Function fn = DefineClass(env, "HalfVectors",
                                  {
                                      InstanceMethod<&HalfVectors::Rescore>("rescore"),
                                      InstanceMethod<&HalfVectors::Gather>("gather"),
                                      InstanceMethod<&HalfVectors::Close>("close"),
                                      InstanceAccessor<&HalfVectors::GetCount>("count"),
                                      InstanceAccessor<&HalfVectors::GetDim>("dim"),
                                  });
  DataOf(env)->halfVectors = Napi::Persistent(fn);
  return fn;
}

Napi::Object HalfVectors::NewInstance(Napi::Env env, std::shared_ptr<HalfMapping> map) {
  auto handle = Napi::External<std::shared_ptr<HalfMapping>>::New(env, &map);
  return DataOf(env)->halfVectors.New({handle});
}

HalfVectors::HalfVectors(const Napi::CallbackInfo& info) : Napi::ObjectWrap<HalfVectors>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw MakeError(info.Env(), "BAD_INPUT", "HalfVectors is created with openHalfVectors()");
  }
  map_ = *info[0].As<Napi::External<std::shared_ptr<HalfMapping>>>().Data();
}

// rescore(queries: Float32Array (n x dim), candidates: BigInt64Array (n x per; -1 = none), k, metric).
Napi::Value HalfVectors::Rescore(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!map_) return Rejected(env, "INDEX_CLOSED", "rescore: the vectors file is closed");
  const auto isType = [](const Napi::Value& v, napi_typedarray_type t) {
    return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == t;
  };
  if (!isType(info[0], napi_float32_array)) return Rejected(env, "BAD_INPUT", "rescore: queries must be a Float32Array");
  if (!isType(info[1], napi_bigint64_array)) {
    return Rejected(env, "BAD_INPUT", "rescore: candidates must be a BigInt64Array");
  }
  const double kd = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(kd) || kd != std::floor(kd) || kd < 1 || kd > kMaxK) {
    return Rejected(env, "BAD_INPUT", "rescore: k must be an integer in [1, " + std::to_string(kMaxK) + "]");
  }
  const std::string metric = info[3].IsString() ? info[3].As<Napi::String>().Utf8Value() : "";
  if (metric != "ip" && metric != "l2") return Rejected(env, "BAD_INPUT", "rescore: metric must be 'ip' or 'l2'");
  auto q = info[0].As<Napi::Float32Array>();
  auto c = info[1].As<Napi::BigInt64Array>();
  const int dim = map_->dim;
  if (q.ElementLength() % dim != 0) {
    return Rejected(env, "BAD_INPUT", "rescore: queries are not a multiple of dim " + std::to_string(dim));
  }
  const int64_t n = static_cast<int64_t>(q.ElementLength() / dim);
  if (n == 0 ? c.ElementLength() != 0 : c.ElementLength() % n != 0) {
    return Rejected(env, "BAD_INPUT", "rescore: candidates are not the same count for every query");
  }
  const int64_t per = n == 0 ? 0 : static_cast<int64_t>(c.ElementLength()) / n;
  const int64_t k = static_cast<int64_t>(kd);
  if (n * k > kMaxResults) return Rejected(env, "BAD_INPUT", "rescore: n * k exceeds " + std::to_string(kMaxResults));
  Borrowed qb{Napi::Persistent(info[0]), q.Data(), q.ElementLength()};
  Borrowed cb{Napi::Persistent(info[1]), c.Data(), c.ElementLength()};
  return QueueWorker<RescoreWorker>(env, map_, std::move(qb), std::move(cb), n, per, k, metric == "ip");
}

// gather(ids: BigInt64Array, out?: Float32Array): Promise<Float32Array> of ids.length x dim, rows in the order
// given; written into `out` (exactly that long) when given, so a caller reading chunk after chunk reuses its
// buffers instead of leaving one a chunk to the collector.
Napi::Value HalfVectors::Gather(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!map_) return Rejected(env, "INDEX_CLOSED", "gather: the vectors file is closed");
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_bigint64_array) {
    return Rejected(env, "BAD_INPUT", "gather: ids must be a BigInt64Array");
  }
  auto ids = info[0].As<Napi::BigInt64Array>();
  const size_t length = ids.ElementLength() * static_cast<size_t>(map_->dim);
  const bool given = info.Length() > 1 && !info[1].IsUndefined();
  if (given && (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array ||
                info[1].As<Napi::Float32Array>().ElementLength() != length)) {
    return Rejected(env, "BAD_INPUT",
                    "gather: out must be a Float32Array of ids.length x dim = " + std::to_string(length) + " floats");
  }
  auto out = given ? info[1].As<Napi::Float32Array>() : Napi::Float32Array::New(env, length);
  Borrowed ib{Napi::Persistent(info[0]), ids.Data(), ids.ElementLength()};
  Borrowed ob{Napi::Persistent(Napi::Value(out)), out.Data(), out.ElementLength()};
  return QueueWorker<GatherWorker>(env, map_, std::move(ib), std::move(ob));
}

Napi::Value HalfVectors::Close(const Napi::CallbackInfo& info) {
  map_.reset();  // running rescores hold their own reference
  auto d = Napi::Promise::Deferred::New(info.Env());
  d.Resolve(info.Env().Undefined());
  return d.Promise();
}

Napi::Value HalfVectors::GetCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), map_ ? static_cast<double>(map_->count) : 0);
}

Napi::Value HalfVectors::GetDim(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), map_ ? map_->dim : 0);
}

Napi::Value OpenHalfVectors(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return Rejected(env, "BAD_INPUT", "openHalfVectors: path must be a string");
  const double d = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : NAN;
  if (!std::isfinite(d) || d != std::floor(d) || d < 1 || d > 65536) {
    return Rejected(env, "BAD_INPUT", "openHalfVectors: dim must be an integer in [1, 65536]");
  }
  return QueueWorker<OpenWorker>(env, info[0].As<Napi::String>().Utf8Value(), static_cast<int>(d));
}

}  // namespace paramine

#include "index_object.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "errors.h"
#include "instance.h"
#include "train.h"
#include "workers.h"

namespace paramine {

namespace {

// Validation failures reject the returned promise (never a synchronous throw from an async method).
struct ArgError {
  std::string code;
  std::string message;
};

ArgError BadInput(std::string message) { return {"BAD_INPUT", std::move(message)}; }

bool IsFloat32(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_float32_array;
}

bool IsBigInt64(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_bigint64_array;
}

// Float32Array whose length is a positive (or, when allowEmpty, zero) multiple of dim.
BorrowedFloats Floats(const Napi::Value& v, int dim, const char* what, bool allowEmpty, idx_t* n) {
  if (!IsFloat32(v)) throw BadInput(std::string(what) + ": vectors must be a Float32Array");
  auto arr = v.As<Napi::Float32Array>();
  size_t len = arr.ElementLength();
  if (len % dim != 0) {
    throw BadInput(std::string(what) + ": length " + std::to_string(len) + " is not a multiple of dim " +
                   std::to_string(dim));
  }
  if (len == 0 && !allowEmpty) throw BadInput(std::string(what) + ": no vectors");
  *n = static_cast<idx_t>(len / dim);
  BorrowedFloats out;
  out.ref = Napi::Persistent(v);
  out.data = arr.Data();
  out.length = len;
  return out;
}

int64_t IntegerOption(const Napi::Object& opts, const char* key, int64_t lo, int64_t hi, int64_t fallback) {
  if (!opts.Has(key)) return fallback;
  Napi::Value v = opts.Get(key);
  if (v.IsUndefined()) return fallback;
  if (!v.IsNumber()) throw BadInput(std::string("search: ") + key + " must be a number");
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || d != std::floor(d) || d < lo || d > hi) {
    throw BadInput(std::string("search: ") + key + " must be an integer in [" + std::to_string(lo) + ", " +
                   std::to_string(hi) + "]");
  }
  return static_cast<int64_t>(d);
}

}  // namespace

void MaybeFinishClose(Napi::Env env, IndexState& st) {
  if (!st.closing || st.pending > 0 || st.closed) return;
  st.index.reset();
  st.closed = true;
  st.Refresh();
  for (auto& d : st.closeWaiters) d.Resolve(env.Undefined());
  st.closeWaiters.clear();
}

Napi::Function IndexObject::Define(Napi::Env env) {
  Napi::Function fn = DefineClass(
      env, "FaissIndex",
      {
          InstanceMethod<&IndexObject::Train>("train"),
          InstanceMethod<&IndexObject::Add>("add"),
          InstanceMethod<&IndexObject::Search>("search"),
          InstanceMethod<&IndexObject::Write>("write"),
          InstanceMethod<&IndexObject::CloneEmpty>("cloneEmpty"),
          InstanceMethod<&IndexObject::Merge>("merge"),
          InstanceMethod<&IndexObject::RemoveIds>("removeIds"),
          InstanceMethod<&IndexObject::Close>("close"),
          InstanceMethod<&IndexObject::TrainInputStages>("trainInputStages"),
          InstanceMethod<&IndexObject::ApplyPreTransform>("applyPreTransform"),
          InstanceMethod<&IndexObject::SetCentroids>("setCentroids"),
          InstanceMethod<&IndexObject::TrainCodes>("trainCodes"),
          InstanceAccessor<&IndexObject::GetDim>("dim"),
          InstanceAccessor<&IndexObject::GetMetric>("metric"),
          InstanceAccessor<&IndexObject::GetNtotal>("ntotal"),
          InstanceAccessor<&IndexObject::GetIsTrained>("isTrained"),
          InstanceAccessor<&IndexObject::GetReadOnly>("readOnly"),
          InstanceAccessor<&IndexObject::GetClosed>("closed"),
          InstanceAccessor<&IndexObject::GetFactory>("factory"),
          InstanceAccessor<&IndexObject::GetStructure>("structure"),
          InstanceAccessor<&IndexObject::GetNlist>("nlist"),
          InstanceAccessor<&IndexObject::GetCoarseDim>("coarseDim"),
          InstanceAccessor<&IndexObject::GetHnswQuantizer>("hnswQuantizer"),
          InstanceAccessor<&IndexObject::GetPreTransform>("preTransform"),
          InstanceAccessor<&IndexObject::GetRemovable>("removable"),
      });
  DataOf(env)->faissIndex = Napi::Persistent(fn);
  return fn;
}

Napi::Object IndexObject::NewInstance(Napi::Env env, std::shared_ptr<IndexState> st) {
  auto handle = Napi::External<std::shared_ptr<IndexState>>::New(env, &st);
  return DataOf(env)->faissIndex.New({handle});
}

std::shared_ptr<IndexState> IndexObject::StateOf(Napi::Value value) {
  if (!value.IsObject()) return nullptr;
  Napi::Object obj = value.As<Napi::Object>();
  if (!obj.InstanceOf(DataOf(value.Env())->faissIndex.Value())) return nullptr;
  return Unwrap(obj)->st_;
}

IndexObject::IndexObject(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IndexObject>(info) {
  if (info.Length() != 1 || !info[0].IsExternal()) {
    throw MakeError(info.Env(), "BAD_INPUT", "FaissIndex is created with createIndex() or readIndex()");
  }
  st_ = *info[0].As<Napi::External<std::shared_ptr<IndexState>>>().Data();
}

namespace {

// Runs `body` unless the index is closing; argument errors become a rejected promise.
template <typename F>
Napi::Value Guarded(Napi::Env env, const IndexState& st, F&& body) {
  if (st.closing) return Rejected(env, "INDEX_CLOSED", "index is closed");
  try {
    return body();
  } catch (const ArgError& e) {
    return Rejected(env, e.code, e.message);
  }
}

}  // namespace

Napi::Value IndexObject::Train(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->dim, "train", false, &n);
    return QueueTrain(env, st_, std::move(x), n);
  });
}

Napi::Value IndexObject::Add(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->dim, "add", true, &n);
    if (!IsBigInt64(info[1])) throw BadInput("add: ids must be a BigInt64Array");
    auto idsArr = info[1].As<Napi::BigInt64Array>();
    if (static_cast<idx_t>(idsArr.ElementLength()) != n) {
      throw BadInput("add: " + std::to_string(idsArr.ElementLength()) + " ids for " + std::to_string(n) +
                     " vectors");
    }
    BorrowedIds ids;
    ids.ref = Napi::Persistent(info[1]);
    ids.data = idsArr.Data();
    ids.length = idsArr.ElementLength();
    return QueueAdd(env, st_, std::move(x), std::move(ids), n);
  });
}

Napi::Value IndexObject::Search(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->dim, "search", true, &n);
    if (!info[1].IsNumber()) throw BadInput("search: k must be a number");
    double kd = info[1].As<Napi::Number>().DoubleValue();
    if (!std::isfinite(kd) || kd != std::floor(kd) || kd < 1 || kd > kMaxK) {
      throw BadInput("search: k must be an integer in [1, " + std::to_string(kMaxK) + "]");
    }
    idx_t k = static_cast<idx_t>(kd);
    if (n * k > kMaxResults) throw BadInput("search: n * k exceeds " + std::to_string(kMaxResults));
    SearchOptions opts;
    Napi::Reference<Napi::Value> exclude;
    if (info.Length() > 2 && !info[2].IsUndefined()) {
      if (!info[2].IsObject()) throw BadInput("search: options must be an object");
      Napi::Object o = info[2].As<Napi::Object>();
      opts.nprobe = static_cast<size_t>(IntegerOption(o, "nprobe", 1, 1 << 20, 0));
      opts.efSearch = static_cast<int>(IntegerOption(o, "efSearch", 1, 1 << 20, 0));
      if (o.Has("kFactor") && !o.Get("kFactor").IsUndefined()) {
        Napi::Value v = o.Get("kFactor");
        double f = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : NAN;
        if (!std::isfinite(f) || f < 1 || k * f > kMaxBaseK || n * k * f > kMaxResults) {
          throw BadInput("search: kFactor must be a number >= 1 with k * kFactor <= " + std::to_string(kMaxBaseK));
        }
        opts.kFactor = f;
      }
      if (o.Has("ids") && !o.Get("ids").IsUndefined()) {
        Napi::Value v = o.Get("ids");
        if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_bigint64_array) {
          throw BadInput("search: ids must be a BigInt64Array");
        }
        auto arr = v.As<Napi::BigInt64Array>();
        opts.select = true;
        opts.selectIds.assign(arr.Data(), arr.Data() + arr.ElementLength());
      }
      if (o.Has("exclude") && !o.Get("exclude").IsUndefined()) {
        Napi::Value v = o.Get("exclude");
        if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
          throw BadInput("search: exclude must be a Uint8Array (a bitmap of ids)");
        }
        auto bits = v.As<Napi::Uint8Array>();
        opts.excludeBits = bits.Data();
        opts.excludeBytes = bits.ElementLength();
        exclude = Napi::Persistent(v);
      }
    }
    // Queries are copied: small, and the caller may reuse its buffer at once.
    std::vector<float> queries(x.data, x.data + x.length);
    return QueueSearch(env, st_, std::move(queries), n, k, opts, std::move(exclude));
  });
}

Napi::Value IndexObject::TrainInputStages(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->dim, "trainInputStages", false, &n);
    return QueueTrainInputStages(env, st_, std::move(x), n);
  });
}

Napi::Value IndexObject::ApplyPreTransform(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->dim, "applyPreTransform", true, &n);
    return QueueApplyPreTransform(env, st_, std::move(x), n);
  });
}

// Centroids and code-training vectors live in the IVF layer's space (coarseDim), after any pre-transform.
Napi::Value IndexObject::SetCentroids(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats c = Floats(info[0], st_->coarseDim, "setCentroids", false, &n);
    return QueueSetCentroids(env, st_, std::move(c), n);
  });
}

Napi::Value IndexObject::TrainCodes(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    idx_t n = 0;
    BorrowedFloats x = Floats(info[0], st_->coarseDim, "trainCodes", false, &n);
    return QueueTrainCodes(env, st_, std::move(x), n);
  });
}

Napi::Value IndexObject::Write(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    if (!info[0].IsString()) throw BadInput("write: path must be a string");
    std::string path = info[0].As<Napi::String>().Utf8Value();
    if (path.empty()) throw BadInput("write: empty path");
    return QueueWrite(env, st_, std::move(path));
  });
}

Napi::Value IndexObject::CloneEmpty(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value { return QueueClone(env, st_); });
}

Napi::Value IndexObject::Merge(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    auto other = StateOf(info[0]);
    if (!other) throw BadInput("merge: argument must be a FaissIndex");
    if (other == st_) throw BadInput("merge: cannot merge an index into itself");
    if (other->closing) throw ArgError{"INDEX_CLOSED", "merge: the other index is closed"};
    return QueueMerge(env, st_, other);
  });
}

Napi::Value IndexObject::RemoveIds(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return Guarded(env, *st_, [&]() -> Napi::Value {
    if (!IsBigInt64(info[0])) throw BadInput("removeIds: ids must be a BigInt64Array");
    auto arr = info[0].As<Napi::BigInt64Array>();
    BorrowedIds ids;
    ids.ref = Napi::Persistent(info[0]);
    ids.data = arr.Data();
    ids.length = arr.ElementLength();
    return QueueRemove(env, st_, std::move(ids));
  });
}

Napi::Value IndexObject::Close(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  auto deferred = Napi::Promise::Deferred::New(env);
  st_->closing = true;
  if (st_->closed) {
    deferred.Resolve(env.Undefined());
  } else {
    st_->closeWaiters.push_back(deferred);
    MaybeFinishClose(env, *st_);
  }
  return deferred.Promise();
}

Napi::Value IndexObject::GetDim(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), st_->dim); }

Napi::Value IndexObject::GetMetric(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), st_->metric == faiss::METRIC_INNER_PRODUCT ? "ip" : "l2");
}

Napi::Value IndexObject::GetNtotal(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(st_->ntotal.load()));
}

Napi::Value IndexObject::GetIsTrained(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->trained.load());
}

Napi::Value IndexObject::GetReadOnly(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->readOnly);
}

Napi::Value IndexObject::GetClosed(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->closing);
}

Napi::Value IndexObject::GetFactory(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), st_->factory);
}

Napi::Value IndexObject::GetStructure(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), st_->structure);
}

Napi::Value IndexObject::GetNlist(const Napi::CallbackInfo& info) {
  if (st_->nlist < 0) return info.Env().Null();
  return Napi::Number::New(info.Env(), static_cast<double>(st_->nlist));
}

Napi::Value IndexObject::GetCoarseDim(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), st_->coarseDim);
}

Napi::Value IndexObject::GetHnswQuantizer(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->hnswQuantizer);
}

Napi::Value IndexObject::GetPreTransform(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->preTransform);
}

// Read on the main thread, where close() resets the index: the object tree never changes otherwise.
Napi::Value IndexObject::GetRemovable(const Napi::CallbackInfo& info) {
  return Napi::Boolean::New(info.Env(), st_->index != nullptr && CanRemoveIds(st_->index.get(), st_->readOnly));
}

}  // namespace paramine

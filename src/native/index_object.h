// The JS class FaissIndex: argument checks on the main thread, work handed to workers.cc.
#pragma once

#include <napi.h>

#include <memory>

#include "state.h"

namespace paramine {

class IndexObject : public Napi::ObjectWrap<IndexObject> {
 public:
  static Napi::Function Define(Napi::Env env);
  // Wraps an opened index; JS code cannot construct FaissIndex directly.
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<IndexState> st);
  static std::shared_ptr<IndexState> StateOf(Napi::Value value);

  explicit IndexObject(const Napi::CallbackInfo& info);

 private:
  Napi::Value Train(const Napi::CallbackInfo& info);
  Napi::Value Add(const Napi::CallbackInfo& info);
  Napi::Value Search(const Napi::CallbackInfo& info);
  Napi::Value Write(const Napi::CallbackInfo& info);
  Napi::Value CloneEmpty(const Napi::CallbackInfo& info);
  Napi::Value Merge(const Napi::CallbackInfo& info);
  Napi::Value RemoveIds(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value TrainInputStages(const Napi::CallbackInfo& info);
  Napi::Value ApplyPreTransform(const Napi::CallbackInfo& info);
  Napi::Value SetCentroids(const Napi::CallbackInfo& info);
  Napi::Value TrainCodes(const Napi::CallbackInfo& info);

  Napi::Value GetDim(const Napi::CallbackInfo& info);
  Napi::Value GetMetric(const Napi::CallbackInfo& info);
  Napi::Value GetNtotal(const Napi::CallbackInfo& info);
  Napi::Value GetIsTrained(const Napi::CallbackInfo& info);
  Napi::Value GetReadOnly(const Napi::CallbackInfo& info);
  Napi::Value GetClosed(const Napi::CallbackInfo& info);
  Napi::Value GetFactory(const Napi::CallbackInfo& info);
  Napi::Value GetStructure(const Napi::CallbackInfo& info);
  Napi::Value GetNlist(const Napi::CallbackInfo& info);
  Napi::Value GetCoarseDim(const Napi::CallbackInfo& info);
  Napi::Value GetHnswQuantizer(const Napi::CallbackInfo& info);
  Napi::Value GetPreTransform(const Napi::CallbackInfo& info);
  Napi::Value GetRemovable(const Napi::CallbackInfo& info);

  std::shared_ptr<IndexState> st_;
};

}  // namespace paramine

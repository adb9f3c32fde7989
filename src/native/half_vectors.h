// A memory-mapped file of n x dim IEEE half floats (an index's vectors.f16), used to re-score ANN
// candidates with exact cosine at no RAM cost: pages come from the page cache, loaded on demand.
//
//   openHalfVectors(path, dim): Promise<HalfVectors>
//   halfVectors.rescore(queries, candidates, k, metric): Promise<{distances, ids}>
//   halfVectors.gather(ids): Promise<Float32Array>   (rows as float32, read and converted off the JS thread)
//   halfVectors.close(): Promise<void>   (the mapping goes when running rescores finish)
#pragma once

#include <napi.h>

#include <cstdint>
#include <memory>
#include <string>

namespace paramine {

// The mapping; shared by the JS object and the workers using it, unmapped by the last one.
struct HalfMapping {
  const uint16_t* data = nullptr;
  size_t bytes = 0;
  int fd = -1;  // kept open for gather: pread leaves nothing resident in the process (the map would)
  int dim = 0;
  int64_t count = 0;
  std::string path;
  ~HalfMapping();
};

class HalfVectors : public Napi::ObjectWrap<HalfVectors> {
 public:
  static Napi::Function Define(Napi::Env env);
  static Napi::Object NewInstance(Napi::Env env, std::shared_ptr<HalfMapping> map);
  explicit HalfVectors(const Napi::CallbackInfo& info);

 private:
  Napi::Value Rescore(const Napi::CallbackInfo& info);
  Napi::Value Gather(const Napi::CallbackInfo& info);
  Napi::Value Close(const Napi::CallbackInfo& info);
  Napi::Value GetCount(const Napi::CallbackInfo& info);
  Napi::Value GetDim(const Napi::CallbackInfo& info);

  std::shared_ptr<HalfMapping> map_;
};

// openHalfVectors(path: string, dim: number): Promise<HalfVectors>.
Napi::Value OpenHalfVectors(const Napi::CallbackInfo& info);

}  // namespace paramine

// Per-environment data of the addon (N-API has one instance-data slot): the JS classes' constructors.
#pragma once

#include <napi.h>

namespace paramine {

struct AddonData {
  Napi::FunctionReference faissIndex;
  Napi::FunctionReference halfVectors;
};

// The environment's AddonData, created on first use.
inline AddonData* DataOf(Napi::Env env) {
  auto* data = env.GetInstanceData<AddonData>();
  if (!data) {
    data = new AddonData();
    env.SetInstanceData<AddonData>(data);
  }
  return data;
}

}  // namespace paramine

// Training an IVF index in steps, so that training scales past what one `train()` call can do: k-means
// with hundreds of thousands of centroids is run as two-level clustering by the caller (src/index/train.ts)
// over these primitives, each an async worker:
//
//   trainInputStages(x)   what learns on raw vectors: OPQ / PCA matrices, refine codes (SQ8)
//   applyPreTransform(x)  vectors into the space the IVF layer works in
//   kmeans(x, k)          one k-means run (module function, no index)
//   setCentroids(c)       the coarse centroids go into the quantizer (flat or HNSW graph)
//   trainCodes(x)         PQ / SQ codebooks on the residuals; the index is then trained
#pragma once

#include <napi.h>

#include <memory>

#include "state.h"
#include "workers.h"

namespace paramine {

Napi::Promise QueueTrainInputStages(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n);
Napi::Promise QueueApplyPreTransform(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n);
Napi::Promise QueueSetCentroids(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats c, idx_t n);
Napi::Promise QueueTrainCodes(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n);

struct KmeansOptions {
  int niter = 20;
  int seed = 1234;
  bool spherical = false;  // inner-product data: centroids renormalized, points assigned by inner product
  int maxPointsPerCentroid = 256;
};

// kmeans(x: Float32Array, dim, k, options?): Promise<Float32Array> (k x dim centroids).
Napi::Value Kmeans(const Napi::CallbackInfo& info);

}  // namespace paramine

// FAISS's float distance kernels, replaced by SIMD ones (distance_kernels.cc says why).
#pragma once

#include <cstddef>
#include <cstdint>

namespace paramine {

// Which set the CPU got: "avx2-fma" or "portable".
const char* DistanceKernels();

struct KernelCheck {
  bool linked = false;         // the library's own callers reach them (the build weakened FAISS's definitions)
  double maxRelError = 0;      // largest relative difference from FAISS's scalar `_ref` kernels
  int nearestMismatches = 0;   // fvec_L2sqr_ny_nearest answers that differ from `_ref`'s
};

// Compares every replaced kernel with FAISS's own reference loops (for tests: cheap, but not free).
KernelCheck CheckDistanceKernels();

// Inner product and squared L2 distance between a float query and a row of IEEE half floats.
float HalfInnerProduct(const float* q, const uint16_t* row, size_t d);
float HalfL2sqr(const float* q, const uint16_t* row, size_t d);

// n IEEE half floats to float32 (exact).
void HalfToFloat(const uint16_t* src, float* dst, size_t n);

}  // namespace paramine

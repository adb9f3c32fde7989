// SIMD replacements for FAISS's float distance kernels.
//
// Debian's libfaiss 1.7.3 is compiled for baseline x86-64 (no SSE3), so its fvec_inner_product, fvec_L2sqr
// and their _ny forms fall back to the scalar `_ref` loops: ~0.5 us for one 384-d inner product, 10x what
// AVX2 + FMA take. Every HNSW quantizer walk (fill and search), PQ encoding and PQ table pass through them.
// The build links a copy of libfaiss.a in which these six symbols are weak (binding.gyp, objcopy -W), so
// the strong definitions below take their place for every caller inside the library. Each picks AVX2 + FMA
// when the CPU has them, else a portable loop the compiler vectorizes with SSE2.
#include "distance_kernels.h"

#include <faiss/utils/distances.h>
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

namespace faiss {
// Exported by libfaiss.a, not declared in its headers: the scalar loops this file replaces.
float fvec_inner_product_ref(const float* x, const float* y, size_t d);
float fvec_L2sqr_ref(const float* x, const float* y, size_t d);
float fvec_norm_L2sqr_ref(const float* x, size_t d);
void fvec_inner_products_ny_ref(float* ip, const float* x, const float* y, size_t d, size_t ny);
void fvec_L2sqr_ny_ref(float* dis, const float* x, const float* y, size_t d, size_t ny);
size_t fvec_L2sqr_ny_nearest_ref(float* distances_tmp_buffer, const float* x, const float* y, size_t d, size_t ny);
}  // namespace faiss

namespace {

bool DetectAvx2Fma() {
  __builtin_cpu_init();  // needed when called from a static initializer, as here
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

const bool kAvx2Fma = DetectAvx2Fma();
const bool kF16c = kAvx2Fma && __builtin_cpu_supports("f16c");

__attribute__((target("avx2,fma"))) inline float HorizontalSum(__m256 v) {
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_shuffle_ps(h, h, 1));
  return _mm_cvtss_f32(h);
}

// Four accumulators hide the FMA latency on long vectors; an 8-d PQ sub-vector takes one step.
__attribute__((target("avx2,fma"))) float InnerProductAvx2(const float* x, const float* y, size_t d) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), a1);
    a2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16), a2);
    a3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24), a3);
  }
  for (; i + 8 <= d; i += 8) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), a0);
  float s = HorizontalSum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < d; i++) s += x[i] * y[i];
  return s;
}

__attribute__((target("avx2,fma"))) float L2sqrAvx2(const float* x, const float* y, size_t d) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 32 <= d; i += 32) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8));
    const __m256 d2 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 16), _mm256_loadu_ps(y + i + 16));
    const __m256 d3 = _mm256_sub_ps(_mm256_loadu_ps(x + i + 24), _mm256_loadu_ps(y + i + 24));
    a0 = _mm256_fmadd_ps(d0, d0, a0);
    a1 = _mm256_fmadd_ps(d1, d1, a1);
    a2 = _mm256_fmadd_ps(d2, d2, a2);
    a3 = _mm256_fmadd_ps(d3, d3, a3);
  }
  for (; i + 8 <= d; i += 8) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i));
    a0 = _mm256_fmadd_ps(d0, d0, a0);
  }
  float s = HorizontalSum(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
  for (; i < d; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
  return s;
}

// Eight 8-lane sums at once: lane j of the result is the sum of v[j] (an 8-wide horizontal add tree).
__attribute__((target("avx2,fma"))) inline __m256 EightSums(const __m256* v) {
  const __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(v[0], v[1]), _mm256_hadd_ps(v[2], v[3]));
  const __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(v[4], v[5]), _mm256_hadd_ps(v[6], v[7]));
  return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

// PQ's 8-d sub-vectors against their 256 centroids (encoding, and the per-query distance tables): one
// horizontal add tree per eight centroids instead of one reduction each.
__attribute__((target("avx2,fma"))) void InnerProductsNy8Avx2(float* out, const float* x, const float* y,
                                                                size_t ny) {
  const __m256 q = _mm256_loadu_ps(x);
  size_t i = 0;
  for (; i + 8 <= ny; i += 8) {
    __m256 v[8];
    for (int j = 0; j < 8; j++) v[j] = _mm256_mul_ps(q, _mm256_loadu_ps(y + (i + j) * 8));
    _mm256_storeu_ps(out + i, EightSums(v));
  }
  for (; i < ny; i++) out[i] = InnerProductAvx2(x, y + i * 8, 8);
}

__attribute__((target("avx2,fma"))) void L2sqrNy8Avx2(float* out, const float* x, const float* y, size_t ny) {
  const __m256 q = _mm256_loadu_ps(x);
  size_t i = 0;
  for (; i + 8 <= ny; i += 8) {
    __m256 v[8];
    for (int j = 0; j < 8; j++) {
      const __m256 d = _mm256_sub_ps(q, _mm256_loadu_ps(y + (i + j) * 8));
      v[j] = _mm256_mul_ps(d, d);
    }
    _mm256_storeu_ps(out + i, EightSums(v));
  }
  for (; i < ny; i++) out[i] = L2sqrAvx2(x, y + i * 8, 8);
}

// The fallback: `omp simd` lets the compiler reorder the sum (the `_ref` loops may not), so SSE2 applies.
float InnerProductPortable(const float* x, const float* y, size_t d) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < d; i++) s += x[i] * y[i];
  return s;
}

float L2sqrPortable(const float* x, const float* y, size_t d) {
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < d; i++) s += (x[i] - y[i]) * (x[i] - y[i]);
  return s;
}

// float32 values of all 65,536 halves, for CPUs without F16C: one table lookup per element.
const float* HalfTable() {
  static std::array<float, 65536> table;
  static std::once_flag once;
  std::call_once(once, [] {
    for (uint32_t h = 0; h < 65536; h++) {
      const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
      uint32_t bits;
      if (exp == 0) {
        float f = std::ldexp(static_cast<float>(mant), -24);  // zero or subnormal, exact
        std::memcpy(&bits, &f, 4);
        bits |= sign;
      } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
      } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
      }
      std::memcpy(&table[h], &bits, 4);
    }
  });
  return table.data();
}

__attribute__((target("avx2,fma,f16c"))) float HalfInnerProductAvx2(const float* q, const uint16_t* row, size_t d) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256 r0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)));
    const __m256 r1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i + 8)));
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), r0, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), r1, a1);
  }
  float s = HorizontalSum(_mm256_add_ps(a0, a1));
  const float* table = HalfTable();
  for (; i < d; i++) s += q[i] * table[row[i]];
  return s;
}

__attribute__((target("avx2,fma,f16c"))) float HalfL2sqrAvx2(const float* q, const uint16_t* row, size_t d) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  size_t i = 0;
  for (; i + 16 <= d; i += 16) {
    const __m256 d0 = _mm256_sub_ps(_mm256_loadu_ps(q + i),
                                    _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i))));
    const __m256 d1 = _mm256_sub_ps(_mm256_loadu_ps(q + i + 8),
                                    _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i + 8))));
    a0 = _mm256_fmadd_ps(d0, d0, a0);
    a1 = _mm256_fmadd_ps(d1, d1, a1);
  }
  float s = HorizontalSum(_mm256_add_ps(a0, a1));
  const float* table = HalfTable();
  for (; i < d; i++) s += (q[i] - table[row[i]]) * (q[i] - table[row[i]]);
  return s;
}

__attribute__((target("avx2,f16c"))) void HalfToFloatF16c(const uint16_t* src, float* dst, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
  }
  const float* table = HalfTable();
  for (; i < n; i++) dst[i] = table[src[i]];
}

float HalfInnerProductPortable(const float* q, const uint16_t* row, size_t d) {
  const float* table = HalfTable();
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < d; i++) s += q[i] * table[row[i]];
  return s;
}

float HalfL2sqrPortable(const float* q, const uint16_t* row, size_t d) {
  const float* table = HalfTable();
  float s = 0;
#pragma omp simd reduction(+ : s)
  for (size_t i = 0; i < d; i++) s += (q[i] - table[row[i]]) * (q[i] - table[row[i]]);
  return s;
}

}  // namespace

namespace faiss {

float fvec_inner_product(const float* x, const float* y, size_t d) {
  return kAvx2Fma ? InnerProductAvx2(x, y, d) : InnerProductPortable(x, y, d);
}

float fvec_L2sqr(const float* x, const float* y, size_t d) {
  return kAvx2Fma ? L2sqrAvx2(x, y, d) : L2sqrPortable(x, y, d);
}

float fvec_norm_L2sqr(const float* x, size_t d) { return fvec_inner_product(x, x, d); }

void fvec_inner_products_ny(float* ip, const float* x, const float* y, size_t d, size_t ny) {
  if (kAvx2Fma && d == 8) return InnerProductsNy8Avx2(ip, x, y, ny);
  for (size_t i = 0; i < ny; i++) ip[i] = fvec_inner_product(x, y + i * d, d);
}

void fvec_L2sqr_ny(float* dis, const float* x, const float* y, size_t d, size_t ny) {
  if (kAvx2Fma && d == 8) return L2sqrNy8Avx2(dis, x, y, ny);
  for (size_t i = 0; i < ny; i++) dis[i] = fvec_L2sqr(x, y + i * d, d);
}

// As FAISS's: the first of the smallest distances; 0 when ny == 0.
size_t fvec_L2sqr_ny_nearest(float* distances_tmp_buffer, const float* x, const float* y, size_t d, size_t ny) {
  fvec_L2sqr_ny(distances_tmp_buffer, x, y, d, ny);
  size_t nearest = 0;
  float best = HUGE_VALF;
  for (size_t i = 0; i < ny; i++) {
    if (distances_tmp_buffer[i] < best) {
      best = distances_tmp_buffer[i];
      nearest = i;
    }
  }
  return nearest;
}

}  // namespace faiss

namespace paramine {

const char* DistanceKernels() { return kAvx2Fma ? (kF16c ? "avx2-fma-f16c" : "avx2-fma") : "portable"; }

float HalfInnerProduct(const float* q, const uint16_t* row, size_t d) {
  return kF16c ? HalfInnerProductAvx2(q, row, d) : HalfInnerProductPortable(q, row, d);
}

float HalfL2sqr(const float* q, const uint16_t* row, size_t d) {
  return kF16c ? HalfL2sqrAvx2(q, row, d) : HalfL2sqrPortable(q, row, d);
}

void HalfToFloat(const uint16_t* src, float* dst, size_t n) {
  if (kF16c) return HalfToFloatF16c(src, dst, n);
  const float* table = HalfTable();
  for (size_t i = 0; i < n; i++) dst[i] = table[src[i]];
}

// fvec_norms_L2sqr lives in another object of the archive and calls fvec_norm_L2sqr through the PLT: if it
// returns our kernel's sum (which differs from the scalar `_ref` loop's in the last bits), ours took effect.
// Then every replaced kernel is compared with FAISS's own `_ref` on lengths that hit full blocks and tails.
KernelCheck CheckDistanceKernels() {
  KernelCheck out;
  std::vector<float> x(384 + 256 * 45);
  for (size_t i = 0; i < x.size(); i++) x[i] = std::sin(0.37f * static_cast<float>(i) + 0.11f);
  float viaLibrary = 0;
  faiss::fvec_norms_L2sqr(&viaLibrary, x.data(), 384, 1);
  out.linked = viaLibrary == faiss::fvec_norm_L2sqr(x.data(), 384) &&
               (viaLibrary != faiss::fvec_inner_product_ref(x.data(), x.data(), 384) || !kAvx2Fma);
  auto note = [&out](float got, float want) {
    const double err = std::fabs(double(got) - double(want)) / std::max(1.0, std::fabs(double(want)));
    out.maxRelError = std::max(out.maxRelError, err);
  };
  std::vector<float> got(256), want(256);
  for (size_t d : {1, 4, 8, 16, 37, 45, 384}) {
    const float* q = x.data() + 5;
    const float* y = x.data() + 384;
    note(faiss::fvec_inner_product(q, y, d), faiss::fvec_inner_product_ref(q, y, d));
    note(faiss::fvec_L2sqr(q, y, d), faiss::fvec_L2sqr_ref(q, y, d));
    note(faiss::fvec_norm_L2sqr(y, d), faiss::fvec_norm_L2sqr_ref(y, d));
    if (d > 45) continue;
    for (size_t ny : {0, 1, 7, 8, 9, 256}) {
      faiss::fvec_inner_products_ny(got.data(), q, y, d, ny);
      faiss::fvec_inner_products_ny_ref(want.data(), q, y, d, ny);
      for (size_t i = 0; i < ny; i++) note(got[i], want[i]);
      faiss::fvec_L2sqr_ny(got.data(), q, y, d, ny);
      faiss::fvec_L2sqr_ny_ref(want.data(), q, y, d, ny);
      for (size_t i = 0; i < ny; i++) note(got[i], want[i]);
      if (faiss::fvec_L2sqr_ny_nearest(got.data(), q, y, d, ny) !=
          faiss::fvec_L2sqr_ny_nearest_ref(want.data(), q, y, d, ny)) {
        out.nearestMismatches++;
      }
    }
  }
  return out;
}

}  // namespace paramine

#include "gram_scorer.h"

#include <cstring>
#include <string>

#include "errors.h"

namespace paramine {

namespace {

// Low bits of a bucket the filter keeps (align-gram-rows.ts's FILTER_BITS): 8 KB, held in L1 where the
// 16 MB table is not, so most of a candidate's buckets cost no lookup in the table.
constexpr uint32_t kFilterBits = 16;
constexpr uint32_t kFilterMask = (1u << kFilterBits) - 1;

[[noreturn]] void Bad(Napi::Env env, const std::string& message) {
  throw MakeError(env, "BAD_INPUT", "GramScorer: " + message);
}

template <typename T>
Napi::TypedArrayOf<T> ArrayOf(Napi::Env env, Napi::Value v, napi_typedarray_type type, const char* name) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) Bad(env, std::string(name) + " has the wrong type");
  return v.As<Napi::TypedArrayOf<T>>();
}

}  // namespace

Napi::Function GramScorer::Define(Napi::Env env) {
  return DefineClass(env, "GramScorer", {InstanceMethod<&GramScorer::Score>("score")});
}

GramScorer::GramScorer(const Napi::CallbackInfo& info) : Napi::ObjectWrap<GramScorer>(info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsObject()) Bad(env, "expected (rows, idf, invNorm, means?)");
  auto rows = info[0].As<Napi::Object>();
  const auto hold = [this](Napi::Value v) { keep_.push_back(Napi::Persistent(v.As<Napi::Object>())); };
  const double bits = rows.Get("countBits").ToNumber().DoubleValue();
  if (!(bits >= 1 && bits <= 16)) Bad(env, "countBits must be 1..16");
  countBits_ = static_cast<uint32_t>(bits);
  buckets_ = 1u << (32 - countBits_);
  auto chunks = rows.Get("chunks");
  if (!chunks.IsArray()) Bad(env, "rows.chunks must be an array");
  auto list = chunks.As<Napi::Array>();
  for (uint32_t c = 0; c < list.Length(); c++) {
    auto chunk = ArrayOf<uint8_t>(env, list.Get(c), napi_uint8_array, "a chunk");
    hold(chunk);
    chunks_.push_back(chunk.Data());
    chunkBytes_.push_back(chunk.ElementLength());
  }
  auto chunkOf = ArrayOf<uint16_t>(env, rows.Get("chunkOf"), napi_uint16_array, "rows.chunkOf");
  auto start = ArrayOf<uint32_t>(env, rows.Get("start"), napi_uint32_array, "rows.start");
  auto end = ArrayOf<uint32_t>(env, rows.Get("end"), napi_uint32_array, "rows.end");
  rows_ = static_cast<int64_t>(chunkOf.ElementLength());
  if (start.ElementLength() < static_cast<size_t>(rows_) || end.ElementLength() < static_cast<size_t>(rows_)) {
    Bad(env, "rows.start and rows.end must cover every row");
  }
  auto idf = ArrayOf<float>(env, info[1], napi_float32_array, "idf");
  if (idf.ElementLength() != buckets_) Bad(env, "idf must have 2^(32 - countBits) entries");
  auto inv = ArrayOf<float>(env, info[2], napi_float32_array, "invNorm");
  if (inv.ElementLength() < static_cast<size_t>(rows_)) Bad(env, "invNorm must cover every row");
  for (Napi::Value v : {Napi::Value(chunkOf), Napi::Value(start), Napi::Value(end), Napi::Value(idf), Napi::Value(inv)}) hold(v);
  chunkOf_ = chunkOf.Data();
  start_ = start.Data();
  end_ = end.Data();
  idf_ = idf.Data();
  invNorm_ = inv.Data();
  if (info.Length() > 3 && info[3].IsObject()) {
    auto means = info[3].As<Napi::Object>();
    auto codes = ArrayOf<int8_t>(env, means.Get("codes"), napi_int8_array, "means.codes");
    auto scales = ArrayOf<float>(env, means.Get("scales"), napi_float32_array, "means.scales");
    const double dim = means.Get("dim").ToNumber().DoubleValue();
    if (!(dim >= 1 && dim <= 65536)) Bad(env, "means.dim must be 1..65536");
    meanDim_ = static_cast<int64_t>(dim);
    if (scales.ElementLength() < static_cast<size_t>(rows_) ||
        codes.ElementLength() < static_cast<size_t>(rows_ * meanDim_)) {
      Bad(env, "means must cover every row");
    }
    hold(codes);
    hold(scales);
    codes_ = codes.Data();
    scales_ = scales.Data();
  }
  checked_.assign(static_cast<size_t>(rows_), 0);
  present_.assign((1u << kFilterBits) / 32, 0);
}

// Decodes row r with every check the fast paths skip: each varint within the row and at most 4 bytes (a gap of
// up to 2^22 shifted) or 2 (a count), buckets increasing and in range.
bool GramScorer::Check(int64_t r) {
  const uint32_t c = chunkOf_[r];
  if (c >= chunks_.size() || start_[r] > end_[r] || end_[r] > chunkBytes_[c]) return false;
  const uint8_t* p = chunks_[c] + start_[r];
  const uint8_t* e = chunks_[c] + end_[r];
  const auto varint = [&](int most, uint32_t* v) {
    *v = 0;
    for (int k = 0; k < most; k++) {
      if (p >= e) return false;
      const uint8_t b = *p++;
      *v |= static_cast<uint32_t>(b & 0x7f) << (7 * k);
      if (b < 0x80) return true;
    }
    return false;
  };
  int64_t prev = -1;
  while (p < e) {
    uint32_t v = 0;
    uint32_t count = 0;
    if (!varint(4, &v)) return false;
    if ((v >> 1) == 0) return false;
    prev += v >> 1;
    if (prev >= buckets_) return false;
    if ((v & 1) == 1 && (!varint(2, &count) || count + 2 >= (1u << countBits_))) return false;
  }
  checked_[r] = 1;
  return true;
}

bool GramScorer::Bytes(int64_t r, const uint8_t** begin, const uint8_t** end) {
  if (r < 0 || r >= rows_ || (!checked_[r] && !Check(r))) return false;
  const uint8_t* chunk = chunks_[chunkOf_[r]];
  *begin = chunk + start_[r];
  *end = chunk + end_[r];
  return true;
}

// Each (bucket, count) of a checked row's bytes, in order: the one decoder of Dot and Score's scatter.
template <typename F>
inline void ForEachEntry(const uint8_t* p, const uint8_t* end, F visit) {
  uint32_t prev = ~0u;
  while (p < end) {
    // Most gaps take two bytes, some one: those read without a loop.
    uint32_t v = *p++;
    if (v >= 0x80) {
      uint32_t b = *p++;
      v = (v & 0x7f) | ((b & 0x7f) << 7);
      for (uint32_t s = 14; b >= 0x80; s += 7) {
        b = *p++;
        v |= (b & 0x7f) << s;
      }
    }
    prev += v >> 1;
    uint32_t count = 1;
    if (v & 1) {
      // Check allows a count of at most 2 bytes.
      const uint32_t b = *p++;
      count = (b & 0x7f) + 2;
      if (b >= 0x80) count += static_cast<uint32_t>(*p++ & 0x7f) << 7;
    }
    visit(prev, count);
  }
}

// GramRows.dot: the same sums in the same order (a double, each term a float's value times an integer; a
// count of 1 multiplies exactly). A word-at-a-time decode without branches on a varint's length was no faster
// here (its chain of dependent loads is as long), nor was prefetching the next candidate's row
// (docs/benchmarks/documents.md).
double GramScorer::Dot(const uint8_t* p, const uint8_t* end) const {
  const float* table = table_.data();
  const uint32_t* present = present_.data();
  double sum = 0;
  ForEachEntry(p, end, [&](uint32_t bucket, uint32_t count) {
    if ((present[(bucket & kFilterMask) >> 5] >> (bucket & 31)) & 1) {
      sum += static_cast<double>(count) * static_cast<double>(table[bucket]);
    }
  });
  return sum;
}

// Int8Rows.dot: an exact integer sum, then times both scales (left to right, as the JavaScript).
double GramScorer::MeanDot(int64_t r, int64_t s) const {
  const int8_t* a = codes_ + r * meanDim_;
  const int8_t* b = codes_ + s * meanDim_;
  int32_t sum = 0;
  for (int64_t x = 0; x < meanDim_; x++) sum += static_cast<int32_t>(a[x]) * static_cast<int32_t>(b[x]);
  return static_cast<double>(sum) * static_cast<double>(scales_[r]) * static_cast<double>(scales_[s]);
}

// score(i, js: Int32Array, out: Float32Array): DocGrams.cosines (and hybridScore's mean with the embeddings' dot).
Napi::Value GramScorer::Score(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber()) Bad(env, "expected (i, js, out)");
  const int64_t i = info[0].As<Napi::Number>().Int64Value();
  auto jsArray = ArrayOf<int32_t>(env, info[1], napi_int32_array, "js");
  auto outArray = ArrayOf<float>(env, info[2], napi_float32_array, "out");
  const size_t n = jsArray.ElementLength();
  if (outArray.ElementLength() < n) Bad(env, "out is shorter than js");
  const int32_t* js = jsArray.Data();
  float* out = outArray.Data();
  const uint8_t* rowBegin;
  const uint8_t* rowEnd;
  if (!Bytes(i, &rowBegin, &rowEnd)) Bad(env, "row " + std::to_string(i) + " is out of range or malformed");
  for (size_t x = 0; x < n; x++) {
    if (js[x] >= 0 && js[x] >= rows_) Bad(env, "candidate " + std::to_string(js[x]) + " is out of range");
  }
  if (table_.empty()) table_.assign(buckets_, 0.0f);
  // Row i's weights, idf squared in them, so a candidate's entries need one lookup each (DocGrams.cosines).
  row_.clear();
  ForEachEntry(rowBegin, rowEnd, [&](uint32_t bucket, uint32_t count) {
    const double idf = idf_[bucket];
    table_[bucket] = static_cast<float>(static_cast<double>(count) * (idf * idf));
    present_[(bucket & kFilterMask) >> 5] |= 1u << (bucket & 31);
    row_.push_back(bucket);
  });
  const double invI = invNorm_[i];
  bool bad = false;
  for (size_t x = 0; x < n; x++) {
    const int32_t j = js[x];
    if (j < 0) continue;
    const uint8_t* b;
    const uint8_t* e;
    if (!Bytes(j, &b, &e)) {
      bad = true;
      break;
    }
    const double v = Dot(b, e) * invI * static_cast<double>(invNorm_[j]);
    const float cosine = static_cast<float>(v > 1 ? 1.0 : v);
    out[x] = codes_ == nullptr ? cosine : static_cast<float>((static_cast<double>(cosine) + MeanDot(i, j)) / 2);
  }
  for (const uint32_t b : row_) {
    table_[b] = 0.0f;
    present_[(b & kFilterMask) >> 5] = 0;
  }
  if (bad) Bad(env, "a candidate's row is malformed");
  return env.Undefined();
}

}  // namespace paramine

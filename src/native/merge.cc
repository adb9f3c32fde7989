#include "merge.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexFlatCodes.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/IndexRefine.h>
#include <faiss/invlists/InvertedLists.h>

#include <typeinfo>

#include "errors.h"

namespace paramine {

namespace {

// Wrapper layers compare by kind, not typeid: FAISS reads an "RFlat" IndexRefine back as IndexRefineFlat
// and a Flat as IndexFlatIP/L2, and those must still merge with their freshly created siblings.
enum class Kind { IDMap, PreTransform, Refine, Flat, Other };

Kind KindOf(const faiss::Index* index) {
  if (dynamic_cast<const faiss::IndexIDMap*>(index)) return Kind::IDMap;
  if (dynamic_cast<const faiss::IndexPreTransform*>(index)) return Kind::PreTransform;
  if (dynamic_cast<const faiss::IndexRefine*>(index)) return Kind::Refine;
  if (dynamic_cast<const faiss::IndexFlat*>(index)) return Kind::Flat;
  return Kind::Other;
}

}  // namespace

void CheckMergeable(const faiss::Index* into, const faiss::Index* from) {
  const Kind kind = KindOf(into);
  if (kind != KindOf(from) || (kind == Kind::Other && typeid(*into) != typeid(*from))) {
    throw CodedError("BAD_INPUT", "merge: the two indexes have different structures");
  }
  if (into->d != from->d || into->metric_type != from->metric_type) {
    throw CodedError("BAD_INPUT", "merge: the two indexes differ in dimension or metric");
  }
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(into)) {
    if (dynamic_cast<const faiss::IndexIDMap2*>(into)) {
      throw CodedError("BAD_INPUT", "merge: IDMap2 indexes are not supported");
    }
    CheckMergeable(m->index, dynamic_cast<const faiss::IndexIDMap*>(from)->index);
    return;
  }
  if (auto p = dynamic_cast<const faiss::IndexPreTransform*>(into)) {
    auto q = dynamic_cast<const faiss::IndexPreTransform*>(from);
    if (p->chain.size() != q->chain.size()) throw CodedError("BAD_INPUT", "merge: different transforms");
    CheckMergeable(p->index, q->index);
    return;
  }
  if (auto r = dynamic_cast<const faiss::IndexRefine*>(into)) {
    auto s = dynamic_cast<const faiss::IndexRefine*>(from);
    CheckMergeable(r->base_index, s->base_index);
    CheckMergeable(r->refine_index, s->refine_index);
    return;
  }
  if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(into)) {
    auto other = dynamic_cast<const faiss::IndexIVF*>(from);
    if (!dynamic_cast<const faiss::ArrayInvertedLists*>(ivf->invlists) ||
        !dynamic_cast<const faiss::ArrayInvertedLists*>(other->invlists)) {
      throw CodedError("BAD_INPUT", "merge: not supported for fast-scan or on-disk inverted lists");
    }
    // Same nlist, code size and (expensive check, on by default) identical coarse centroids.
    ivf->check_compatible_for_merge(*other);
    return;
  }
  if (kind == Kind::Flat) return;  // same d and metric: raw vectors append
  if (dynamic_cast<const faiss::IndexFlatCodes*>(into)) {
    into->check_compatible_for_merge(*from);
    return;
  }
  throw CodedError("BAD_INPUT", "merge: not supported for this index type");
}

// `positional`: the layer numbers its vectors 0..ntotal-1 (under an IDMap or a Refine) rather than storing
// caller ids, so the moved vectors' labels must be shifted past the existing ones.
static void MergeLayer(faiss::Index* into, faiss::Index* from, bool positional) {
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(into)) {
    auto o = dynamic_cast<faiss::IndexIDMap*>(from);
    MergeLayer(m->index, o->index, true);
    m->id_map.insert(m->id_map.end(), o->id_map.begin(), o->id_map.end());
    o->id_map.clear();
    m->ntotal = m->index->ntotal;
    o->ntotal = 0;
    return;
  }
  if (auto p = dynamic_cast<faiss::IndexPreTransform*>(into)) {
    auto q = dynamic_cast<faiss::IndexPreTransform*>(from);
    MergeLayer(p->index, q->index, positional);
    p->ntotal = p->index->ntotal;
    q->ntotal = 0;
    return;
  }
  if (auto r = dynamic_cast<faiss::IndexRefine*>(into)) {
    auto s = dynamic_cast<faiss::IndexRefine*>(from);
    // The base layer's labels are positions in the refine layer: both move, the base labels shifted.
    MergeLayer(r->base_index, s->base_index, true);
    MergeLayer(r->refine_index, s->refine_index, true);
    r->ntotal = r->base_index->ntotal;
    s->ntotal = 0;
    return;
  }
  if (KindOf(into) == Kind::Flat) {
    // IndexFlatCodes::merge_from insists on identical C++ types (IndexFlat vs IndexFlatIP).
    auto a = dynamic_cast<faiss::IndexFlat*>(into);
    auto b = dynamic_cast<faiss::IndexFlat*>(from);
    a->codes.insert(a->codes.end(), b->codes.begin(), b->codes.end());
    a->ntotal += b->ntotal;
    b->reset();
    return;
  }
  if (dynamic_cast<faiss::IndexIVF*>(into)) {
    into->merge_from(*from, positional ? into->ntotal : 0);
    return;
  }
  into->merge_from(*from, 0);  // flat codes: positions by construction
}

void MergeInto(faiss::Index* into, faiss::Index* from) { MergeLayer(into, from, false); }

}  // namespace paramine

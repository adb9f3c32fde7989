// removeIds(): dropping vectors by id (FAISS remove_ids) on a libuv pool thread, for `index --compact`.
#include <faiss/IndexFlatCodes.h>
#include <faiss/IndexIDMap.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexPreTransform.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/invlists/InvertedLists.h>
#include <faiss/invlists/OnDiskInvertedLists.h>

#include <mutex>
#include <shared_mutex>

#include "workers.h"

namespace paramine {

// Whether remove_ids can run on `index` without aborting the process: FAISS drops ids from IVF lists inside
// an OpenMP loop, and lists that cannot be edited in place (fast-scan blocks) throw there, which terminates;
// HNSW and IndexRefine throw "not implemented" (harmless, but say so plainly). `mapped`: the index was
// memory-mapped, its array lists read as on-disk ones; it answers for the file (itself read-only).
bool CanRemoveIds(const faiss::Index* index, bool mapped) {
  if (auto m = dynamic_cast<const faiss::IndexIDMap*>(index)) return CanRemoveIds(m->index, mapped);
  if (auto t = dynamic_cast<const faiss::IndexPreTransform*>(index)) return CanRemoveIds(t->index, mapped);
  if (auto ivf = dynamic_cast<const faiss::IndexIVF*>(index)) {
    if (mapped && dynamic_cast<const faiss::OnDiskInvertedLists*>(ivf->invlists) != nullptr) return true;
    return dynamic_cast<const faiss::ArrayInvertedLists*>(ivf->invlists) != nullptr;
  }
  return dynamic_cast<const faiss::IndexFlatCodes*>(index) != nullptr;
}

namespace {

class RemoveWorker : public IndexWorker {
 public:
  RemoveWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedIds ids)
      : IndexWorker(env, std::move(st)), ids_(std::move(ids)) {}

 private:
  void Run() override {
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    CheckWritable(*st_, "removeIds");
    if (!CanRemoveIds(st_->index.get(), false)) {
      throw CodedError("BAD_INPUT", "removeIds: " + st_->factory +
                                        " cannot drop vectors in place (fast-scan, HNSW or refine layers)");
    }
    // FAISS scans every inverted list (or the id map) once; ids it does not hold are ignored.
    faiss::IDSelectorBatch sel(static_cast<idx_t>(ids_.length), reinterpret_cast<const idx_t*>(ids_.data));
    removed_ = ids_.length == 0 ? 0 : st_->index->remove_ids(sel);
    st_->Refresh();
  }

  Napi::Value Result(Napi::Env env) override { return Napi::Number::New(env, static_cast<double>(removed_)); }

  BorrowedIds ids_;
  size_t removed_ = 0;
};

}  // namespace

Napi::Promise QueueRemove(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedIds ids) {
  return QueueWorker<RemoveWorker>(env, std::move(st), std::move(ids));
}

}  // namespace paramine

#include "workers.h"

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <faiss/invlists/OnDiskInvertedLists.h>
#include <omp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>

#include "index_object.h"
#include "merge.h"
#include "tree.h"

namespace paramine {

IndexWorker::IndexWorker(Napi::Env env, std::shared_ptr<IndexState> st, std::shared_ptr<IndexState> other)
    : Napi::AsyncWorker(env), st_(std::move(st)), other_(std::move(other)), deferred_(Napi::Promise::Deferred::New(env)) {
  if (st_) st_->pending++;
  if (other_) other_->pending++;
}

void IndexWorker::Execute() {
  omp_set_num_threads(g_threads.load());
  try {
    Run();
  } catch (...) {
    error_ = CurrentError(faissCode_);
    SetError(error_.message);
  }
}

void IndexWorker::OnOK() {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  try {
    deferred_.Resolve(Result(env));
  } catch (const Napi::Error& e) {
    deferred_.Reject(e.Value());
  }
  Settle(env);
}

void IndexWorker::OnError(const Napi::Error&) {
  Napi::Env env = Env();
  Napi::HandleScope scope(env);
  deferred_.Reject(MakeError(env, error_.code, error_.message).Value());
  Settle(env);
}

void IndexWorker::Settle(Napi::Env env) {
  for (auto* s : {st_.get(), other_.get()}) {
    if (!s) continue;
    s->pending--;
    MaybeFinishClose(env, *s);
  }
}

// Beyond this, squared norms and distances overflow float to Infinity, and FAISS's k-means then assigns
// points to centroid -1 and aborts the process (an assert in Clustering.cpp); no embedding comes near.
constexpr float kMaxComponent = 1e15f;

void CheckFinite(const float* x, size_t count, int dim, const char* what) {
  for (size_t i = 0; i < count; i++) {
    if (!std::isfinite(x[i])) {
      throw CodedError("BAD_INPUT", std::string(what) + ": vector " + std::to_string(i / dim) +
                                        " contains NaN or Infinity");
    }
    if (std::fabs(x[i]) > kMaxComponent) {
      throw CodedError("BAD_INPUT", std::string(what) + ": vector " + std::to_string(i / dim) +
                                        " has a component beyond +-1e15 (distances would overflow)");
    }
  }
}

void CheckOpen(const IndexState& st) {
  if (!st.index) throw CodedError("INDEX_CLOSED", "index is closed");
}

void CheckWritable(const IndexState& st, const char* op) {
  if (st.readOnly) {
    throw CodedError("INDEX_READ_ONLY", std::string(op) + ": index was opened with mmap and is read-only");
  }
}

namespace {

class TrainWorker : public IndexWorker {
 public:
  TrainWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n)
      : IndexWorker(env, std::move(st)), x_(std::move(x)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, st_->dim, "train");
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    CheckWritable(*st_, "train");
    if (st_->index->ntotal > 0) throw CodedError("CONFLICT", "train: the index already holds vectors");
    if (!st_->needsTraining) return;  // born trained (Flat): nothing to learn
    // Retraining would silently invalidate every clone made from this template.
    if (st_->index->is_trained) throw CodedError("CONFLICT", "train: the index is already trained");
    if (auto ivf = FindIVF(st_->index.get()); ivf && static_cast<size_t>(n_) < ivf->nlist) {
      throw CodedError("BAD_INPUT", "train: " + std::to_string(n_) + " training vectors for " +
                                        std::to_string(ivf->nlist) + " lists; need at least one per list");
    }
    AssignmentEf assignment(st_->index.get(), st_->quantizerEf);
    st_->index->train(n_, x_.data);
    st_->Refresh();
  }

  BorrowedFloats x_;
  idx_t n_;
};

class AddWorker : public IndexWorker {
 public:
  AddWorker(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, BorrowedIds ids, idx_t n)
      : IndexWorker(env, std::move(st)), x_(std::move(x)), ids_(std::move(ids)), n_(n) {}

 private:
  void Run() override {
    CheckFinite(x_.data, x_.length, st_->dim, "add");
    for (idx_t i = 0; i < n_; i++) {
      if (ids_.data[i] < 0) throw CodedError("BAD_INPUT", "add: ids[" + std::to_string(i) + "] is negative");
    }
    std::unique_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    // Checked here, not left to FAISS: a read-only add fails inside an OpenMP region and aborts the process.
    CheckWritable(*st_, "add");
    if (!st_->index->is_trained) throw CodedError("INDEX_NOT_TRAINED", "add: the index is not trained");
    AssignmentEf assignment(st_->index.get(), st_->quantizerEf);
    if (n_ > 0) st_->index->add_with_ids(n_, x_.data, reinterpret_cast<const idx_t*>(ids_.data));
    st_->Refresh();
  }

  BorrowedFloats x_;
  BorrowedIds ids_;
  idx_t n_;
};

class SearchWorker : public IndexWorker {
 public:
  SearchWorker(Napi::Env env, std::shared_ptr<IndexState> st, std::vector<float> queries, idx_t n, idx_t k,
               SearchOptions opts, Napi::Reference<Napi::Value> exclude)
      : IndexWorker(env, std::move(st)),
        queries_(std::move(queries)),
        n_(n),
        k_(k),
        opts_(opts),
        exclude_(std::move(exclude)) {}

 private:
  void Run() override {
    CheckFinite(queries_.data(), queries_.size(), st_->dim, "search");
    std::shared_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    if (!st_->index->is_trained) throw CodedError("INDEX_NOT_TRAINED", "search: the index is not trained");
    distances_.resize(n_ * k_);
    labels_.resize(n_ * k_);
    std::unique_ptr<faiss::IDSelectorBatch> batch;
    if (opts_.select) batch = std::make_unique<faiss::IDSelectorBatch>(opts_.selectIds.size(), opts_.selectIds.data());
    SearchSelector sel;
    sel.inner = batch.get();
    sel.bits = opts_.excludeBits;
    sel.bytes = opts_.excludeBytes;
    if (opts_.select || opts_.excludeBits != nullptr) opts_.sel = &sel;
    if (n_ > 0) CompositeSearch(*st_, st_->index.get(), n_, queries_.data(), k_, distances_.data(), labels_.data(), opts_);
  }

  Napi::Value Result(Napi::Env env) override { return SearchResult(env, distances_, labels_); }

  std::vector<float> queries_;
  idx_t n_, k_;
  SearchOptions opts_;
  // Keeps the exclusion bitmap's buffer alive while the search reads it.
  Napi::Reference<Napi::Value> exclude_;
  std::vector<float> distances_;
  std::vector<idx_t> labels_;
};

class WriteWorker : public IndexWorker {
 public:
  WriteWorker(Napi::Env env, std::shared_ptr<IndexState> st, std::string path)
      : IndexWorker(env, std::move(st)), path_(std::move(path)) {}

 private:
  void Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    // An mmap'd index would be written as a reference to its own file, not as data.
    CheckWritable(*st_, "write");
    // Into a temporary file renamed over the target: a reader that has the old file memory-mapped keeps
    // its pages (writing in place truncates them under it: SIGBUS), and a crash leaves no half file.
    static std::atomic<unsigned> serial{0};
    const std::string tmp = path_ + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
    try {
      faiss::write_index(st_->index.get(), tmp.c_str());
    } catch (...) {
      std::remove(tmp.c_str());
      throw;
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
      const int err = errno;
      std::remove(tmp.c_str());
      throw CodedError("FAISS_ERROR", "write: cannot rename into " + path_ + ": " + std::strerror(err));
    }
  }

  std::string path_;
};

faiss::Index* CopyIndex(const faiss::Index* index) {
  // A serialization round trip, not clone_index: 1.7.3's clone_index knows neither IndexRefine nor the
  // fast-scan IVF, and copies an HNSW coarse quantizer as a bare IndexHNSW that write_index then refuses.
  // Only trained, empty templates are copied, so the bytes are the quantizer and codebooks.
  faiss::VectorIOWriter writer;
  faiss::write_index(index, &writer);
  faiss::VectorIOReader reader;
  reader.data = std::move(writer.data);
  return faiss::read_index(&reader);
}

class CloneWorker : public IndexWorker {
 public:
  CloneWorker(Napi::Env env, std::shared_ptr<IndexState> st) : IndexWorker(env, std::move(st)) {}

 private:
  void Run() override {
    std::shared_lock<std::shared_mutex> lock(st_->rw);
    CheckOpen(*st_);
    CheckWritable(*st_, "cloneEmpty");
    auto copy = std::make_shared<IndexState>();
    copy->index.reset(CopyIndex(st_->index.get()));
    copy->index->reset();
    copy->dim = st_->dim;
    copy->metric = st_->metric;
    copy->factory = st_->factory;
    copy->needsTraining = st_->needsTraining;
    copy->structure = st_->structure;
    copy->nlist = st_->nlist;
    copy->coarseDim = st_->coarseDim;
    copy->hnswQuantizer = st_->hnswQuantizer;
    copy->quantizerEf = st_->quantizerEf;
    copy->preTransform = st_->preTransform;
    copy->Refresh();
    result_ = std::move(copy);
  }

  Napi::Value Result(Napi::Env env) override { return IndexObject::NewInstance(env, result_); }

  std::shared_ptr<IndexState> result_;
};

class MergeWorker : public IndexWorker {
 public:
  MergeWorker(Napi::Env env, std::shared_ptr<IndexState> into, std::shared_ptr<IndexState> from)
      : IndexWorker(env, std::move(into), std::move(from)) {}

 private:
  void Run() override {
    std::unique_lock<std::shared_mutex> a(st_->rw, std::defer_lock);
    std::unique_lock<std::shared_mutex> b(other_->rw, std::defer_lock);
    std::lock(a, b);  // lock order by std::lock: no deadlock when two merges cross
    CheckOpen(*st_);
    CheckOpen(*other_);
    CheckWritable(*st_, "merge");
    CheckWritable(*other_, "merge");
    if (st_->dim != other_->dim) {
      throw CodedError("DIM_MISMATCH", "merge: dimension " + std::to_string(other_->dim) + " into " +
                                           std::to_string(st_->dim));
    }
    if (!st_->index->is_trained || !other_->index->is_trained) {
      throw CodedError("INDEX_NOT_TRAINED", "merge: both indexes must be trained");
    }
    CheckMergeable(st_->index.get(), other_->index.get());
    MergeInto(st_->index.get(), other_->index.get());
    st_->Refresh();
    other_->Refresh();
  }
};

// A truncated file maps without complaint and then reads garbage or dies of SIGBUS: check every mapped list
// lies inside the file before the index is handed out.
void CheckMappedLists(const faiss::Index& index, size_t fileSize) {
  auto ivf = FindIVF(&index);
  if (!ivf) return;
  auto od = dynamic_cast<const faiss::OnDiskInvertedLists*>(ivf->invlists);
  if (!od) return;
  const size_t entry = od->code_size + sizeof(idx_t);
  for (const auto& list : od->lists) {
    if (list.size > list.capacity || list.offset + list.capacity * entry > fileSize) {
      throw CodedError("BAD_FILE", "index file is truncated (inverted lists end past the end of the file)");
    }
  }
}

class ReadWorker : public IndexWorker {
 public:
  ReadWorker(Napi::Env env, std::string path, bool mmap) : IndexWorker(env, nullptr), path_(std::move(path)), mmap_(mmap) {
    faissCode_ = "BAD_FILE";
  }

 private:
  void Run() override {
    struct stat sb;
    if (::stat(path_.c_str(), &sb) != 0) {
      throw CodedError(errno == ENOENT ? "FILE_NOT_FOUND" : "BAD_FILE", path_ + ": " + std::strerror(errno));
    }
    if (!S_ISREG(sb.st_mode)) throw CodedError("BAD_FILE", path_ + ": not a regular file");
    auto st = std::make_shared<IndexState>();
    st->index.reset(faiss::read_index(path_.c_str(), mmap_ ? faiss::IO_FLAG_MMAP : 0));
    st->dim = st->index->d;
    st->metric = st->index->metric_type;
    st->readOnly = mmap_;
    const faiss::Index* inner = st->index.get();
    if (auto m = dynamic_cast<const faiss::IndexIDMap*>(inner)) inner = m->index;
    st->needsTraining = dynamic_cast<const faiss::IndexFlat*>(inner) == nullptr;
    if (mmap_) CheckMappedLists(*st->index, static_cast<size_t>(sb.st_size));
    FillShape(*st);
    st->Refresh();
    result_ = std::move(st);
  }

  Napi::Value Result(Napi::Env env) override { return IndexObject::NewInstance(env, result_); }

  std::string path_;
  bool mmap_;
  std::shared_ptr<IndexState> result_;
};

}  // namespace

void FillShape(IndexState& st) {
  st.structure = Describe(st.index.get());
  auto ivf = FindIVF(st.index.get());
  st.nlist = ivf ? static_cast<int64_t>(ivf->nlist) : -1;
  st.coarseDim = ivf ? static_cast<int>(ivf->d) : st.dim;
  const faiss::IndexHNSW* hnsw = ivf ? HnswQuantizer(ivf) : nullptr;
  st.hnswQuantizer = hnsw != nullptr;
  st.quantizerEf = hnsw ? hnsw->hnsw.efSearch : 0;
  st.preTransform = HasPreTransform(st.index.get());
}

Napi::Promise QueueTrain(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, idx_t n) {
  return QueueWorker<TrainWorker>(env, std::move(st), std::move(x), n);
}
Napi::Promise QueueAdd(Napi::Env env, std::shared_ptr<IndexState> st, BorrowedFloats x, BorrowedIds ids, idx_t n) {
  return QueueWorker<AddWorker>(env, std::move(st), std::move(x), std::move(ids), n);
}
Napi::Promise QueueSearch(Napi::Env env, std::shared_ptr<IndexState> st, std::vector<float> queries, idx_t n,
                          idx_t k, SearchOptions opts, Napi::Reference<Napi::Value> exclude) {
  return QueueWorker<SearchWorker>(env, std::move(st), std::move(queries), n, k, opts, std::move(exclude));
}
Napi::Promise QueueWrite(Napi::Env env, std::shared_ptr<IndexState> st, std::string path) {
  return QueueWorker<WriteWorker>(env, std::move(st), std::move(path));
}
Napi::Promise QueueClone(Napi::Env env, std::shared_ptr<IndexState> st) {
  return QueueWorker<CloneWorker>(env, std::move(st));
}
Napi::Promise QueueMerge(Napi::Env env, std::shared_ptr<IndexState> into, std::shared_ptr<IndexState> from) {
  return QueueWorker<MergeWorker>(env, std::move(into), std::move(from));
}
Napi::Promise QueueRead(Napi::Env env, std::string path, bool mmap) {
  return QueueWorker<ReadWorker>(env, std::move(path), mmap);
}

}  // namespace paramine

// Single queries straight on Debian's libfaiss.a (bench/experiments/kernels-ab/run.sh builds it).
// usage: ./single INDEX QUERIES nprobe [nq] [passes]
#include <faiss/index_io.h>
#include <faiss/IndexIVF.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIDMap.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <memory>
int main(int argc, char** argv) {
  std::unique_ptr<faiss::Index> index(faiss::read_index(argv[1]));
  FILE* f = fopen(argv[2], "rb"); std::vector<float> q(1000 * 384); fread(q.data(), 4, q.size(), f); fclose(f);
  int nprobe = atoi(argv[3]); int nq = argc > 4 ? atoi(argv[4]) : 1000; int passes = argc > 5 ? atoi(argv[5]) : 3;
  faiss::Index* inner = index.get();
  if (auto m = dynamic_cast<faiss::IndexIDMap*>(inner)) inner = m->index;
  auto ivf = dynamic_cast<faiss::IndexIVF*>(inner);
  auto hnsw = dynamic_cast<faiss::IndexHNSW*>(ivf->quantizer);
  faiss::SearchParametersIVF params; params.nprobe = nprobe;
  faiss::SearchParametersHNSW qp; qp.efSearch = 2 * nprobe;
  if (hnsw) { hnsw->hnsw.efSearch = 2 * nprobe; params.quantizer_params = &qp; }
  std::vector<float> D(10); std::vector<faiss::Index::idx_t> I(10);
  for (int p = 0; p < passes; p++) {
    std::vector<double> lat;
    for (int i = 0; i < nq; i++) {
      auto t = std::chrono::steady_clock::now();
      index->search(1, q.data() + i * 384, 10, D.data(), I.data(), &params);
      lat.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    std::sort(lat.begin(), lat.end()); double s = 0; for (double x : lat) s += x;
    printf("c++ pass %d p50 %.3f p90 %.3f mean %.3f\n", p, lat[nq / 2], lat[nq * 9 / 10], s / nq);
  }
}

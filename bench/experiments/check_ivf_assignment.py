#!/usr/bin/env python3
"""Are a built IVF index's vectors in their nearest list? The check that found the 10^7 recall cap
(BENCHMARKS.md "Index at scale").

    .venv-faiss/bin/python bench/experiments/check_ivf_assignment.py --index DIR \
        [--queries Q.f32 --truth T.i64] [--sample 20000]

DIR is a paramine index directory (one shard, vectors.f16 kept), e.g. `bench scale`'s tmp/scale/index-N.
Prints:
  - the share of sampled vectors stored in the list of their exact nearest centroid;
  - what an HNSW quantizer's efSearch would give on these centroids (the assignment's quality and speed);
  - with --queries/--truth (bench scale's queries.f32 and truth-N.i64): where the true top-10 of each query
    sit in that query's exact list ranking, i.e. the recall ceiling of each nprobe before any code's error.
Needs Python FAISS (`pip install faiss-cpu==1.7.3 'numpy<2'`).
"""

import argparse
import json
import os
import time

import faiss
import numpy as np


def list_of_ids(ivf, wanted):
    """List number of every id in `wanted` (a scan of all inverted lists' ids)."""
    where = {}
    inv = ivf.invlists
    for lst in range(ivf.nlist):
        n = inv.list_size(lst)
        if n:
            ids = faiss.rev_swig_ptr(inv.get_ids(lst), n)
            for i in ids[np.isin(ids, wanted)]:
                where[int(i)] = lst
    return np.array([where[int(i)] for i in wanted])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries")
    ap.add_argument("--truth")
    ap.add_argument("--sample", type=int, default=20_000)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    faiss.omp_set_num_threads(a.threads)
    manifest = json.load(open(os.path.join(a.index, "manifest.json")))
    d, n = manifest["dim"], manifest["ntotal"]
    xb = np.memmap(os.path.join(a.index, "vectors.f16"), dtype="<f2", mode="r", shape=(n, d))
    index = faiss.read_index(os.path.join(a.index, manifest["shards"][0]["file"]))
    ivf = faiss.extract_index_ivf(index)  # a view into `index`: keep that alive
    quantizer = faiss.downcast_index(ivf.quantizer)
    storage = quantizer.storage if isinstance(quantizer, faiss.IndexHNSW) else quantizer
    centroids = storage.reconstruct_n(0, ivf.nlist)
    exact = faiss.IndexFlatIP(d) if ivf.metric_type == faiss.METRIC_INNER_PRODUCT else faiss.IndexFlatL2(d)
    exact.add(centroids)

    ids = np.sort(np.random.default_rng(5).choice(n, min(a.sample, n), replace=False))
    x = np.asarray(xb[ids], dtype="float32")
    _, nearest = exact.search(x, 256)
    stored = list_of_ids(ivf, ids)
    print(
        f"{np.mean(stored == nearest[:, 0]):.4f} of {len(ids)} sampled vectors are in their nearest list; "
        f"{np.mean((nearest != stored[:, None]).all(1)):.4f} outside the 256 nearest"
    )

    if isinstance(quantizer, faiss.IndexHNSW):
        print(f"HNSW quantizer: efConstruction {quantizer.hnsw.efConstruction}")
        for ef in [16, 32, 64, 128]:
            quantizer.hnsw.efSearch = ef
            t = time.time()
            _, got = quantizer.search(x, 1)
            rate = len(x) / (time.time() - t)
            print(
                f"  efSearch {ef:4}: nearest list found for {np.mean(got[:, 0] == nearest[:, 0]):.4f}, "
                f"{rate:,.0f} vectors/s"
            )

    if a.queries and a.truth:
        xq = np.fromfile(a.queries, dtype="<f4").reshape(-1, d)
        truth = np.fromfile(a.truth, dtype="<i8").reshape(xq.shape[0], -1)[:, :10]
        q = min(len(xq), 200)
        _, ranking = exact.search(xq[:q], min(4096, ivf.nlist))
        flat = truth[:q].ravel()
        where = list_of_ids(ivf, np.unique(flat))
        lst = dict(zip(np.unique(flat).tolist(), where.tolist()))
        ranks = np.array(
            [(np.where(ranking[i] == lst[int(t)])[0][:1].tolist() or [1 << 30])[0] for i in range(q) for t in truth[i]]
        )
        for nprobe in [16, 32, 64, 128, 256, 1024]:
            print(f"  nprobe {nprobe:5}: {np.mean(ranks < nprobe):.4f} of the true top-10 are in the probed lists")


if __name__ == "__main__":
    main()

"""autofaiss side of `npm run lab -- tune` (src/bench/tune-bench.ts).

Reads the same vectors (float32 .npy, rows = ids), builds the index autofaiss picks under the same RAM
budget and thread count, and measures it against the same exact ground truth: held-out queries (rows of
the collection, each left out of its own results), recall@k, single-query p50, build time. One JSON
object on stdout.

  .venv-autofaiss/bin/python src/bench/autofaiss-bench.py '{"dir": ..., "maxRam": "16MB", "threads": 2, "k": 10}'

Needs autofaiss==2.18.0 with faiss-cpu==1.8.0 and pyarrow<16 (newer ones break its imports).
"""
import json
import os
import sys
import time


def main() -> None:
    cfg = json.loads(sys.argv[1])
    threads = int(cfg["threads"])
    os.environ["OMP_NUM_THREADS"] = str(threads)
    import faiss  # noqa: E402
    import numpy as np  # noqa: E402
    from autofaiss import build_index  # noqa: E402

    faiss.omp_set_num_threads(threads)
    d = cfg["dir"]
    k = int(cfg["k"])
    corpus = np.load(os.path.join(d, "corpus.npy"))
    queries = np.load(os.path.join(d, "queries.npy"))
    qids = np.load(os.path.join(d, "query-ids.npy"))
    truth = np.load(os.path.join(d, "truth.npy"))
    t0 = time.time()
    index, infos = build_index(
        embeddings=corpus,
        save_on_disk=False,
        max_index_memory_usage=cfg["maxRam"],
        current_memory_available=cfg.get("memoryAvailable", "8G"),
        metric_type="ip",
        nb_cores=threads,
        verbose=40,
    )
    build_s = time.time() - t0
    params = infos.get("index_param", "") if infos else ""
    if params:
        faiss.ParameterSpace().set_index_parameters(index, params)
    _, found = index.search(queries, k + 1)
    hits = 0
    wanted = 0
    for q in range(len(queries)):
        row = [i for i in found[q] if i != qids[q] and i >= 0][:k]
        want = set(int(x) for x in truth[q] if x >= 0)
        wanted += len(want)
        hits += sum(1 for i in row if int(i) in want)
    singles = min(len(queries), int(cfg.get("latencyQueries", 300)))
    for q in range(min(singles, 50)):
        index.search(queries[q : q + 1], k + 1)
    times = []
    for q in range(singles):
        s = time.perf_counter()
        index.search(queries[q : q + 1], k + 1)
        times.append((time.perf_counter() - s) * 1000)
    times.sort()
    print(
        json.dumps(
            {
                "indexKey": infos.get("index_key") if infos else None,
                "indexParam": params,
                "sizeBytes": infos.get("size in bytes") if infos else None,
                "recall": hits / max(wanted, 1),
                "p50Ms": times[len(times) // 2],
                "p99Ms": times[min(len(times) - 1, int(0.99 * len(times)))],
                "buildS": build_s,
                "faissVersion": faiss.__version__,
            }
        )
    )


if __name__ == "__main__":
    main()

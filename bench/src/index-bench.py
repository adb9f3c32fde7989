"""Python FAISS side of `npm run lab -- index`: the same vectors, factories and settings as the Node run.

Started by src/bench/index-bench.ts with Debian's /usr/bin/python3 (python3-faiss 1.7.3). It loads the
vectors once, then answers one JSON request per stdin line with one JSON line on stdout, so the Node side
can alternate its own timing passes with these on a shared, noisy machine. Not meant to be run by hand.
"""

import json
import os
import sys
import time

import faiss
import numpy as np


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def recall_at_k(gt, got, k):
    hits = 0
    for row_gt, row_got in zip(gt, got):
        hits += len(set(row_gt[:k].tolist()) & set(row_got[:k].tolist()))
    return hits / (gt.shape[0] * k)


class Side:
    def __init__(self, cfg):
        self.cfg = cfg
        d, n, nq, k = cfg["dim"], cfg["n"], cfg["nq"], cfg["k"]
        self.xb = np.fromfile(cfg["corpus"], dtype="<f4").reshape(n, d)
        self.xq = np.fromfile(cfg["queries"], dtype="<f4").reshape(nq, d)
        self.gt = np.fromfile(cfg["gt"], dtype="<i8").reshape(nq, k)
        faiss.omp_set_num_threads(cfg["threads"])
        self.index = None
        self.ivf = None

    def build(self, factory):
        cfg, xb = self.cfg, self.xb
        n, batch = cfg["n"], cfg["addBatch"]
        self.index = None
        index = faiss.index_factory(cfg["dim"], factory, faiss.METRIC_INNER_PRODUCT)
        t0 = time.perf_counter()
        index.train(xb[: cfg["train"]])
        train_s = time.perf_counter() - t0
        # IndexRefine has no add_with_ids in 1.7.3 (the binding wraps it in an IDMap); sequential ids are the
        # same dense ids here.
        with_ids = "R" not in factory.split(",")[-1]
        ids = np.arange(n, dtype="int64")
        rss0 = rss_bytes()
        t0 = time.perf_counter()
        for start in range(0, n, batch):
            if with_ids:
                index.add_with_ids(xb[start : start + batch], ids[start : start + batch])
            else:
                index.add(xb[start : start + batch])
        add_s = time.perf_counter() - t0
        rss1 = rss_bytes()
        path = cfg["tmpdir"] + "/py.faiss"
        faiss.write_index(index, path)
        file_bytes = os.path.getsize(path)
        os.remove(path)
        base = index
        if not with_ids:
            refine = faiss.downcast_index(index)
            refine.k_factor = cfg["kFactor"]
            base = refine.base_index  # extract_index_ivf does not look inside IndexRefine in 1.7.3
        self.index = index
        self.ivf = faiss.extract_index_ivf(base)
        return {
            "trainS": train_s,
            "addPerS": n / add_s,
            "rssDeltaBytes": rss1 - rss0,
            "rssBytes": rss1,
            "fileBytes": file_bytes,
        }

    def single(self, nprobe):
        # The index attribute: fast-scan IVF rejects SearchParameters in 1.7.3.
        self.ivf.nprobe = nprobe
        xq, k = self.xq, self.cfg["k"]
        t0 = time.perf_counter()
        for i in range(self.cfg["singles"]):
            self.index.search(xq[i : i + 1], k)
        return {"seconds": time.perf_counter() - t0}

    def batch(self, nprobe):
        self.ivf.nprobe = nprobe
        t0 = time.perf_counter()
        _, got = self.index.search(self.xq, self.cfg["k"])
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "recall": recall_at_k(self.gt, got, self.cfg["k"])}


def main():
    side = Side(json.loads(sys.argv[1]))
    print(json.dumps({"ready": True, "faissVersion": faiss.__version__}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req["cmd"]
        if cmd == "build":
            out = side.build(req["factory"])
        elif cmd == "single":
            out = side.single(req["nprobe"])
        elif cmd == "batch":
            out = side.batch(req["nprobe"])
        else:
            out = {"error": "unknown command " + cmd}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

"""Python FAISS side of `node dist/bench/scale-bench.js`: the same factory, sample and training algorithm
as the binding (src/index/train.ts), built through Python FAISS on the same vectors.

Started by src/bench/scale-bench.ts with the venv's python (pip faiss-cpu 1.7.3, the library version
the binding links): its AVX2 build where the CPU has it, its generic one under FAISS_DISABLE_CPU_FEATURES=AVX2
(`--python-simd generic`); the ready line says which loaded.
One JSON request per stdin line, one JSON answer per stdout line, so the Node side alternates its timing
passes with these. Not meant to be run by hand.
"""

import json
import os
import sys
import time

import faiss
import numpy as np

MAX_POINTS_PER_CENTROID = 256
SUBSAMPLE = 65536
HNSW_EF_CONSTRUCTION = 200
HNSW_ASSIGN_EF = 32


def spread(items, m):
    if m >= len(items):
        return items
    step = len(items) / m
    return items[(np.arange(m) * step).astype(np.int64)]


def allocate(sizes, nlist):
    """Lists per group proportional to its share (as src/index/train.ts allocateLists)."""
    total = sizes.sum()
    out = np.where(sizes == 0, 0, np.minimum(sizes, np.maximum(1, (sizes * nlist) // total)))
    left = nlist - out.sum()
    order = np.argsort(-sizes, kind="stable")
    while left != 0:
        for g in order:
            if left == 0:
                break
            if left > 0 and sizes[g] - out[g] > 0:
                out[g] += 1
                left -= 1
            elif left < 0 and out[g] > 1:
                out[g] -= 1
                left += 1
    return out


class Side:
    def __init__(self, cfg):
        self.cfg = cfg
        d = cfg["dim"]
        self.xb = np.memmap(cfg["vectors"], dtype="<f2", mode="r", shape=(cfg["n"], d))
        self.xq = np.fromfile(cfg["queries"], dtype="<f4").reshape(-1, d)
        self.truth = np.fromfile(cfg["truth"], dtype="<i8").reshape(self.xq.shape[0], -1)
        faiss.omp_set_num_threads(cfg["threads"])
        self.index = None

    def rows(self, ids):
        return np.ascontiguousarray(self.xb[ids], dtype="float32")

    def kmeans(self, x, k, salt):
        km = faiss.Kmeans(
            x.shape[1], int(k), niter=self.cfg["niter"], seed=(self.cfg["seed"] + salt * 7919) % 2**30,
            spherical=True, max_points_per_centroid=MAX_POINTS_PER_CENTROID, min_points_per_centroid=1,
        )
        km.train(x)
        return km.centroids

    def build(self, factory):
        cfg = self.cfg
        sample = np.fromfile(cfg["sample"], dtype="<i8")
        index = faiss.index_factory(cfg["dim"], factory, faiss.METRIC_INNER_PRODUCT)
        ivf = faiss.extract_index_ivf(index)
        pre = faiss.downcast_index(index) if isinstance(faiss.downcast_index(index), faiss.IndexPreTransform) else None
        stages = {}
        t0 = time.perf_counter()
        sub = self.rows(spread(sample, SUBSAMPLE))
        if pre is not None:
            for i in range(pre.chain.size()):
                pre.chain.at(i).train(sub)

        def coarse(x):
            for i in range(pre.chain.size() if pre is not None else 0):
                x = pre.chain.at(i).apply(x)
            return x

        t = time.perf_counter()
        nlist = ivf.nlist
        groups = max(1, round(nlist ** 0.5))
        c1 = self.kmeans(coarse(self.rows(spread(sample, groups * MAX_POINTS_PER_CENTROID))), groups, 0)
        stages["level1S"] = time.perf_counter() - t
        t = time.perf_counter()
        flat = faiss.IndexFlatIP(ivf.d)
        flat.add(c1)
        assign = np.empty(len(sample), dtype=np.int64)
        for s in range(0, len(sample), 65536):
            _, a = flat.search(coarse(self.rows(sample[s : s + 65536])), 1)
            assign[s : s + 65536] = a[:, 0]
        stages["assignS"] = time.perf_counter() - t
        t = time.perf_counter()
        sizes = np.bincount(assign, minlength=groups)
        lists = allocate(sizes, nlist)
        cents = []
        for g in range(groups):
            ids = sample[assign == g]
            if lists[g] == 0:
                continue
            m = min(len(ids), lists[g] * MAX_POINTS_PER_CENTROID)
            cents.append(self.kmeans(coarse(self.rows(spread(ids, m))), lists[g], g + 1))
        centroids = np.ascontiguousarray(np.vstack(cents), dtype="float32")
        stages["groupsS"] = time.perf_counter() - t
        t = time.perf_counter()
        hnsw = faiss.downcast_index(ivf.quantizer)
        hnsw = hnsw if isinstance(hnsw, faiss.IndexHNSW) else None
        if hnsw is not None:  # the binding's settings (src/native/tree.h): graph breadth, assignment beam
            hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        ivf.quantizer.reset()
        ivf.quantizer.add(centroids)
        stages["quantizerS"] = time.perf_counter() - t
        if hnsw is not None:
            own = hnsw.hnsw.efSearch
            hnsw.hnsw.efSearch = max(own, HNSW_ASSIGN_EF)
        t = time.perf_counter()
        ivf.train(coarse(sub))  # the quantizer is full: FAISS trains only the codebooks
        index.is_trained = True
        stages["codesS"] = time.perf_counter() - t
        train_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        n = cfg["n"]
        for s in range(0, n, 65536):
            e = min(n, s + 65536)
            index.add_with_ids(self.rows(np.arange(s, e)), np.arange(s, e, dtype="int64"))
        add_s = time.perf_counter() - t0
        if hnsw is not None:
            hnsw.hnsw.efSearch = own
        # paramine's fill time includes writing the shard: write this one too (then drop it).
        t = time.perf_counter()
        path = os.path.join(os.path.dirname(cfg["vectors"]), "python-build.faiss")
        faiss.write_index(index, path)
        stages["writeS"] = time.perf_counter() - t
        os.unlink(path)
        return {"trainS": train_s, "addS": add_s, "stages": stages, "ntotal": index.ntotal}

    def load(self, path):
        self.index = faiss.read_index(path)
        return {"ntotal": self.index.ntotal}

    def single(self, nprobe, ef, k):
        params = faiss.SearchParametersIVF()
        params.nprobe = nprobe
        quantizer = faiss.downcast_index(faiss.extract_index_ivf(self.index).quantizer)
        if isinstance(quantizer, faiss.IndexHNSW):
            hnsw = faiss.SearchParametersHNSW()
            hnsw.efSearch = max(ef, nprobe)
            params.quantizer_params = hnsw
            quantizer.hnsw.efSearch = hnsw.efSearch  # FAISS 1.7.3 sizes the beam from the graph's field
        xq, nq = self.xq, self.xq.shape[0]
        got = np.empty((nq, k), dtype=np.int64)
        lat = []
        for i in range(nq):
            t = time.perf_counter()
            _, got[i : i + 1] = self.index.search(xq[i : i + 1], k, params=params)
            lat.append(time.perf_counter() - t)
        hits = sum(len(set(self.truth[i, :10]) & set(got[i, :10])) for i in range(nq))
        return {"latencies": lat, "recall": hits / (nq * 10)}


def main():
    side = Side(json.loads(sys.argv[1]))
    print(json.dumps({"ready": True, "faissVersion": faiss.__version__, "simd": faiss.get_compile_options()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        cmd = req["cmd"]
        try:
            if cmd == "build":
                out = side.build(req["factory"])
            elif cmd == "load":
                out = side.load(req["path"])
            elif cmd == "single":
                out = side.single(req["nprobe"], req["efSearch"], req["k"])
            else:
                out = {"error": "unknown command " + cmd}
        except Exception as e:  # reported to the Node side, which stops the benchmark
            out = {"error": repr(e)}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()

"""Single queries through pip faiss-cpu (bench/experiments/kernels-ab/run.sh).

python single.py INDEX QUERIES nprobe [nq] [passes]
"""

import sys
import time

import faiss
import numpy as np

path, qpath, nprobe = sys.argv[1], sys.argv[2], int(sys.argv[3])
nq = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
passes = int(sys.argv[5]) if len(sys.argv) > 5 else 3
index = faiss.read_index(path)
q = np.fromfile(qpath, dtype=np.float32).reshape(-1, 384)
ivf = faiss.extract_index_ivf(index)
hn = faiss.downcast_index(ivf.quantizer)
ps = faiss.SearchParametersIVF()
ps.nprobe = nprobe
if isinstance(hn, faiss.IndexHNSW):
    hn.hnsw.efSearch = 2 * nprobe
    qp = faiss.SearchParametersHNSW()
    qp.efSearch = 2 * nprobe
    ps.quantizer_params = qp
for p in range(passes):
    lat = []
    for i in range(nq):
        t = time.perf_counter()
        index.search(q[i : i + 1], 10, params=ps)
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    print(f"python pass {p} p50 {lat[nq // 2]:.3f} p90 {lat[int(nq * 0.9)]:.3f} mean {sum(lat) / nq:.3f}")

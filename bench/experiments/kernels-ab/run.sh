#!/usr/bin/env bash
# A/B of FAISS's distance kernels on one built IVF index (BENCHMARKS.md, "Index at scale", Distance kernels):
# single-query p50 through the binding with the addon's kernels, the binding with Debian's (an addon built
# before them, given as OLD_ADDON), C++ straight on Debian's libfaiss, and pip faiss-cpu (AVX2, generic);
# then adding N vectors into the trained template with each addon.
#   bash bench/experiments/kernels-ab/run.sh INDEX_DIR QUERIES.f32 VECTORS.f16 [nprobe 64] [add 50000]
# e.g. INDEX_DIR=tmp/scale/index-10000000 QUERIES=tmp/scale/queries.f32 VECTORS=tmp/scale/vectors.f16
# (`paramine bench scale` makes them). Needs `npm run build`, .venv-faiss (faiss-cpu==1.7.3) and g++.
set -euo pipefail
dir=$1 queries=$2 vectors=$3 nprobe=${4:-64} add=${5:-50000}
here=$(dirname "$0")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
g++ -O2 "$here/single.cc" -Wl,--whole-archive /usr/lib/x86_64-linux-gnu/libfaiss.a -Wl,--no-whole-archive \
  -lopenblas -fopenmp -o "$out/single"
export OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=1
shard=$dir/shard-000.faiss
node "$here/single.mjs" "$shard" "$queries" "$nprobe" 1000 2 | sed 's/^/addon kernels: /'
if [ -n "${OLD_ADDON:-}" ]; then
  PARAMINE_FAISS_ADDON=$OLD_ADDON node "$here/single.mjs" "$shard" "$queries" "$nprobe" 1000 2 | sed 's/^/Debian kernels: /'
fi
"$out/single" "$shard" "$queries" "$nprobe" 1000 2 | sed 's/^/C++ on libfaiss.a: /'
.venv-faiss/bin/python "$here/single.py" "$shard" "$queries" "$nprobe" 1000 2 | sed 's/^/pip AVX2: /'
FAISS_DISABLE_CPU_FEATURES=AVX2 .venv-faiss/bin/python "$here/single.py" "$shard" "$queries" "$nprobe" 1000 2 |
  sed 's/^/pip generic: /'
node "$here/fill.mjs" "$dir/trained.faiss" "$vectors" "$add" | sed 's/^/addon kernels: /'
if [ -n "${OLD_ADDON:-}" ]; then
  PARAMINE_FAISS_ADDON=$OLD_ADDON node "$here/fill.mjs" "$dir/trained.faiss" "$vectors" "$add" | sed 's/^/Debian kernels: /'
fi

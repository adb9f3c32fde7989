#!/usr/bin/env bash
# One process with 2 threads vs 2 queue workers with 1 thread each, same corpus, same options:
# wall time of each build and the queue's overhead. Usage: bench/experiments/bench-queue.sh CORPUS.txt [WORKDIR]
# CHUNK_LINES (default 8192): input lines per embed job of the queue build.
# Starts its own redis-server (AOF on, random port) and stops everything it started on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "$1")
dir=${2:-$(mktemp -d /tmp/paramine-bench-queue-XXXX)}
mkdir -p "$dir"
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
now() { date +%s.%N; }
cpu="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "machine: $cpu; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus: $corpus ($(wc -l < "$corpus") lines)"

t0=$(now)
nice -n 10 node dist/cli.js index --input "$corpus" --out "$dir/one" --threads 2 --quiet > "$dir/one.txt"
t1=$(now)
echo "one process, 2 threads: $(echo "$t1 - $t0" | bc) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$dir/one.txt"

redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --save '' > "$dir/redis.log" 2>&1 &
pids+=($!)
sleep 1
url="redis://127.0.0.1:$port/0"
for i in 1 2; do
  nice -n 10 node dist/cli.js worker --queue "$url" --threads 1 > "$dir/worker$i.log" 2>&1 &
  pids+=($!)
done
t2=$(now)
nice -n 10 node dist/cli.js index --queue "$url" --work "$dir/work" --input "$corpus" --out "$dir/queue" --chunk-lines "${CHUNK_LINES:-8192}" \
  --threads 2 --quiet > "$dir/queue.txt" 2> "$dir/coordinator.log"
t3=$(now)
echo "queue, 2 workers x 1 thread: $(echo "$t3 - $t2" | bc) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$dir/queue.txt"
grep -E '^(embed|dedup|fill):' "$dir/coordinator.log" || true
one=$(echo "$t1 - $t0" | bc); q=$(echo "$t3 - $t2" | bc)
echo "queue overhead: $(echo "scale=3; ($q - $one) / $one * 100" | bc) %"
cmp -s "$dir/one/vectors.f16" "$dir/queue/vectors.f16" && echo "vectors.f16 identical" || echo "vectors.f16 differ"

#!/usr/bin/env bash
# The queue's overhead at equal compute: one process pinned to one core (taskset: ONNX Runtime then
# uses one thread) against the queue build with one worker (--threads 1) and its coordinator pinned to
# the same core, alternated ROUNDS times (default 2) so both see the same background load. Wall time
# on a shared machine swings with the neighbours' load; CPU seconds (user + sys of every process of the
# build: the one process; coordinator + worker + redis-server) are the steadier measure of overhead.
# Usage: bench/experiments/bench-queue-overhead.sh CORPUS.txt [WORKDIR]   (env: ROUNDS, CHUNK_LINES, CORE)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=$(realpath "$1")
dir=${2:-$(mktemp -d /tmp/paramine-bench-overhead-XXXX)}
core=${CORE:-0}
mkdir -p "$dir"
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --save '' > "$dir/redis.log" 2>&1 &
redis=$!
worker=
cleanup() { [[ -n $worker ]] && kill "$worker" 2>/dev/null; kill "$redis" 2>/dev/null || true; }
trap cleanup EXIT
sleep 1
url="redis://127.0.0.1:$port/0"
taskset -c "$core" nice -n 10 node dist/cli.js worker --queue "$url" --threads 1 > "$dir/worker.log" 2>&1 &
worker=$!
now() { date +%s.%N; }
# CPU seconds (user + sys) a running process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }
# CPU seconds of a finished command, from GNU time's output file.
cpu_file() { awk '{ print $1 + $2 }' "$1"; }
echo "machine: $(nproc) cores; pinned to core $core; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "corpus: $corpus ($(wc -l < "$corpus") lines)"
for r in $(seq 1 "${ROUNDS:-2}"); do
  t0=$(now)
  /usr/bin/time -f '%U %S' -o "$dir/one-$r.time" taskset -c "$core" nice -n 10 \
    node dist/cli.js index --input "$corpus" --out "$dir/one-$r" --quiet > /dev/null
  t1=$(now)
  w0=$(cpu_of "$worker"); r0=$(cpu_of "$redis")
  /usr/bin/time -f '%U %S' -o "$dir/queue-$r.time" taskset -c "$core" nice -n 10 \
    node dist/cli.js index --queue "$url" --work "$dir/work-$r" --input "$corpus" \
    --out "$dir/queue-$r" --chunk-lines "${CHUNK_LINES:-500}" --quiet > /dev/null 2> "$dir/coordinator-$r.log"
  t2=$(now)
  one=$(echo "$t1 - $t0" | bc); q=$(echo "$t2 - $t1" | bc)
  cone=$(cpu_file "$dir/one-$r.time")
  ccoord=$(cpu_file "$dir/queue-$r.time")
  cwork=$(echo "$(cpu_of "$worker") - $w0" | bc); credis=$(echo "$(cpu_of "$redis") - $r0" | bc)
  cq=$(echo "$ccoord + $cwork + $credis" | bc)
  echo "round $r: wall: one process $one s, queue (1 worker) $q s; load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "  CPU: one process $cone s; queue $cq s (coordinator $ccoord, worker $cwork, redis $credis);" \
    "overhead $(echo "scale=1; ($cq - $cone) * 100 / $cone" | bc) %"
  cmp -s "$dir/one-$r/vectors.f16" "$dir/queue-$r/vectors.f16" && echo "  vectors.f16 identical"
done

#!/usr/bin/env bash
# Raw Kafka throughput of tokenfeed::kafka beside kcat (same librdkafka),
# against a private single-node broker that this script starts and stops:
# produce and consume N records of S bytes (token-like data, see
# kafka_throughput.cc) for each compression, and print a Markdown table.
#   bench/kafka/run.sh [RECORDS [SIZE]]      (default 40000 x 16384 B)
# Needs: a release build with kafka_throughput (cmake --build build/release
# --target kafka_throughput), Java 17 and kcat. MB = 10^6 bytes. "CPU s" is
# the client process's user+system time: MB per CPU second is the rate one
# core sustains. The broker runs on the same machine and competes for CPU;
# TOKENFEED_BENCH_PIN=1 pins the broker to CPU 0 and each client to CPU 1, so
# every client row is one core's rate (needs taskset and two CPUs).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
records="${1:-40000}"
size="${2:-16384}"
reps="${TOKENFEED_BENCH_REPS:-3}"
tool="$root/build/release/bench/kafka/kafka_throughput"
work="$root/build/kafka-bench"
dir="$work/broker"
[ -x "$tool" ] || { echo "run.sh: build kafka_throughput first (cmake --build build/release --target kafka_throughput)" >&2; exit 1; }
command -v kcat >/dev/null || { echo "run.sh: kcat is needed (Debian package kcat)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "run.sh: /usr/bin/time is needed (Debian package time)" >&2; exit 1; }
mkdir -p "$work"
"$root/scripts/kafka-local" --dir "$dir" clean >/dev/null 2>&1 || true
trap '"$root/scripts/kafka-local" --dir "$dir" clean >/dev/null 2>&1 || true' EXIT
bootstrap="$("$root/scripts/kafka-local" --dir "$dir" start 2>/dev/null | tail -n 1)"
bootstrap="${bootstrap#bootstrap=}"
pin=()
if [ "${TOKENFEED_BENCH_PIN:-0}" = "1" ]; then
  command -v taskset >/dev/null || { echo "run.sh: TOKENFEED_BENCH_PIN=1 needs taskset (util-linux)" >&2; exit 1; }
  taskset -a -p -c 0 "$(cat "$dir/node-1/kafka.pid")" >/dev/null
  pin=(taskset -c 1)
fi
data="$work/records-$records-$size.bin"
[ -f "$data" ] || "$tool" gen --records "$records" --size "$size" --out "$data"

# The fetch settings tokenfeed's consumers use (src/kafka/consumer_core.cc),
# given to kcat too for the "tuned" rows.
fetch=(-X fetch.max.bytes=67108864 -X max.partition.fetch.bytes=4194304 -X receive.message.max.bytes=68157440
       -X queued.max.messages.kbytes=262144 -X fetch.wait.max.ms=100)
produce_props=(-X enable.idempotence=true -X acks=all -X linger.ms=10 -X batch.size=1000000
               -X batch.num.messages=10000 -X queue.buffering.max.kbytes=262144)

quiet() { grep -v '^%' || true; }
# "wall cpu" of a command, its output discarded.
timed() { /usr/bin/time -f '%e %U %S' -o "$work/time.txt" "$@" <"${stdin:-/dev/null}" >/dev/null 2>"$work/err.txt" || { cat "$work/err.txt" >&2; return 1; }
          awk '{printf "%s %.3f\n", $1, $2 + $3}' "$work/time.txt"; }
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
mb() { awk -v b="$1" 'BEGIN{printf "%.1f", b / 1e6}'; }
row() {  # what compression wall cpu
  local bytes=$((records * size))
  awk -v w="$3" -v c="$4" -v b="$bytes" -v n="$records" -v what="$1" -v comp="$2" \
    'BEGIN{printf "| %s | %s | %.0f | %.0f | %.2f | %.0f |\n", what, comp, b/1e6/w, n/w, c, b/1e6/c}'
}
median() { sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }

echo "| client | compression | MB/s | records/s | CPU s | MB per CPU s |"
echo "|---|---|---:|---:|---:|---:|"
for comp in none lz4 zstd; do
  "$tool" create --bootstrap "$bootstrap" --topic "tf-$comp" --partitions 1 2>&1 | quiet
  out="$("${pin[@]}" "$tool" produce --bootstrap "$bootstrap" --topic "tf-$comp" --records "$records" --input "$data" --compression "$comp" 2>&1 | quiet)"
  row "tokenfeed produce" "$comp" "$(echo "$out" | field wall_s)" "$(echo "$out" | field cpu_s)"
  "$tool" create --bootstrap "$bootstrap" --topic "kcat-$comp" --partitions 1 2>&1 | quiet
  # kcat sends a file named on its command line as one message: feed stdin.
  read -r w c < <(stdin="$data" timed "${pin[@]}" kcat -P -b "$bootstrap" -t "kcat-$comp" -p 0 -D '@@TFREC@@' \
                   -X compression.type="$comp" "${produce_props[@]}")
  row "kcat -P" "$comp" "$w" "$c"
  # Consumers: median of $reps runs (by wall time) over the same topic.
  res=""
  for _ in $(seq "$reps"); do
    out="$("${pin[@]}" "$tool" consume --bootstrap "$bootstrap" --topic "tf-$comp" 2>&1 | quiet)"
    res+="$(echo "$out" | field wall_s) $(echo "$out" | field cpu_s)"$'\n'
  done
  read -r w c < <(printf '%s' "$res" | median)
  row "tokenfeed consume" "$comp" "$w" "$c"
  res=""
  for _ in $(seq "$reps"); do
    out="$("${pin[@]}" "$tool" consume --tune-heap --bootstrap "$bootstrap" --topic "tf-$comp" 2>&1 | quiet)"
    res+="$(echo "$out" | field wall_s) $(echo "$out" | field cpu_s)"$'\n'
  done
  read -r w c < <(printf '%s' "$res" | median)
  row "tokenfeed consume, KeepLargeBuffersInHeap" "$comp" "$w" "$c"
  res=""
  for _ in $(seq "$reps"); do res+="$(timed "${pin[@]}" kcat -C -b "$bootstrap" -t "tf-$comp" -p 0 -o beginning -e -q "${fetch[@]}")"$'\n'; done
  read -r w c < <(printf '%s' "$res" | median)
  row "kcat -C (tuned fetch)" "$comp" "$w" "$c"
  res=""
  for _ in $(seq "$reps"); do res+="$(timed "${pin[@]}" kcat -C -b "$bootstrap" -t "tf-$comp" -p 0 -o beginning -e -q)"$'\n'; done
  read -r w c < <(printf '%s' "$res" | median)
  row "kcat -C (librdkafka defaults)" "$comp" "$w" "$c"
done
echo
[ ${#pin[@]} -gt 0 ] && echo "pinned: broker on CPU 0, clients on CPU 1"
echo "records=$records size=$size bytes=$(mb $((records * size))) MB; librdkafka $(pkg-config --modversion rdkafka); $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for comp in none lz4 zstd; do
  echo "on-disk size of tf-$comp: $(du -sm "$dir/node-1/data/tf-$comp-0" | cut -f1) MB"
done

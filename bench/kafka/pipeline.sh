#!/usr/bin/env bash
# tokenfeed's Kafka pipeline beside the baseline's (docs/kafka.md, "Benchmarks"),
# on a private single-node broker that this script starts and stops, and the
# corpus in $TOKENFEED_BENCH_CORPUS (default /work/shared/corpus, *.jsonl):
#   1. producing: `tokenfeed ingest` vs the baseline's Python producer
#      (transformers AutoTokenizer + confluent-kafka + JSON values),
#      documents and tokens per second and per CPU second;
#   2. bytes on disk (the partitions' .log files) and on the wire (what a
#      consumer receives, from librdkafka's statistics) per compression and
#      for the baseline's JSON;
#   3. consuming: tokenfeed's cursor (cursor_read), kcat -C and confluent-kafka
#      in Python, over COPIES copies of the corpus ingested to one topic per
#      compression; the baseline's JSON reader over its own topic.
#   bench/kafka/pipeline.sh [PRODUCE_COPIES [COPIES]]      (default 4 and 8)
# Copies (real files: the ingest reads a file only once, by inode) amortize
# the start-up (loading the tokenizer, connecting) over enough documents.
# Needs: a release build with tokenfeed, cursor_read and kafka_throughput,
# Java 17, kcat, /usr/bin/time, and .venv with transformers and
# confluent-kafka (python/requirements-dev.txt). "CPU s" is the client
# process's user+system time (all its threads); per CPU second = one core.
# TOKENFEED_BENCH_PIN=1 pins the broker to CPU 0 and the clients to CPU 1.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
produce_copies="${1:-4}"
copies="${2:-8}"
reps="${TOKENFEED_BENCH_REPS:-3}"
corpus="${TOKENFEED_BENCH_CORPUS:-/work/shared/corpus}"
bin="$root/build/release"
tf="$bin/src/cli/tokenfeed"
cursor="$bin/bench/kafka/cursor_read"
kt="$bin/bench/kafka/kafka_throughput"
py="$root/.venv/bin/python"
tokdir="${TOKENFEED_TOKENIZERS_DIR:-$root/.cache/tokenizers}/deepseek_v3"
work="$root/build/kafka-bench-pipeline"
dir="$work/broker"
for x in "$tf" "$cursor" "$kt"; do
  [ -x "$x" ] || { echo "pipeline.sh: build $x first (cmake --build build/release --target tokenfeed cursor_read kafka_throughput)" >&2; exit 1; }
done
command -v kcat >/dev/null || { echo "pipeline.sh: kcat is needed" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "pipeline.sh: /usr/bin/time is needed" >&2; exit 1; }
"$py" -c "import confluent_kafka, transformers" 2>/dev/null ||
  { echo "pipeline.sh: .venv needs confluent-kafka and transformers (pip install -r python/requirements-dev.txt)" >&2; exit 1; }
inputs=("$corpus"/*.jsonl)
[ -e "${inputs[0]}" ] || { echo "pipeline.sh: no *.jsonl in $corpus" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/copies"
"$root/scripts/kafka-local" --dir "$dir" clean >/dev/null 2>&1 || true
trap '"$root/scripts/kafka-local" --dir "$dir" clean >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
bootstrap="$("$root/scripts/kafka-local" --dir "$dir" start 2>/dev/null | tail -n 1)"
bootstrap="${bootstrap#bootstrap=}"
pin=()
if [ "${TOKENFEED_BENCH_PIN:-0}" = "1" ]; then
  taskset -a -p -c 0 "$(cat "$dir/node-1/kafka.pid")" >/dev/null
  pin=(taskset -c 1)
fi
for i in $(seq "$copies"); do
  for f in "${inputs[@]}"; do cp "$f" "$work/copies/c$i-$(basename "$f")"; done
done
produce_inputs=()
for i in $(seq "$produce_copies"); do produce_inputs+=("$work"/copies/c"$i"-*.jsonl); done

quiet() { grep -v '^%' || true; }
# "wall cpu" of a command; its standard output goes to $work/out.txt (to
# /dev/null with discard=1: kcat prints every record).
timed() {
  local out="$work/out.txt"
  [ "${discard:-0}" = 1 ] && out=/dev/null
  /usr/bin/time -f '%e %U %S' -o "$work/time.txt" "$@" >"$out" 2>"$work/err.txt" ||
    { cat "$work/err.txt" >&2; return 1; }
  awk '{printf "%s %.3f\n", $1, $2 + $3}' "$work/time.txt"
}
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$work/out.txt"; }
median() { sort -n | awk '{a[NR]=$0} END{print a[int((NR+1)/2)]}'; }
create() { "$kt" create --bootstrap "$bootstrap" --topic "$1" --partitions 4 2>&1 | quiet; }
log_bytes() { find "$dir/node-1/data" -path "*/$1-[0-9]*/*.log" -printf '%s\n' | awk '{s+=$1} END{print s+0}'; }
wire_bytes() { "$py" "$root/bench/kafka/python_consumer.py" --bootstrap "$bootstrap" --topic "$1" >"$work/out.txt" 2>/dev/null
               field rx_bytes; }
ingest() {  # topic compression inputs...
  local t="$1" c="$2"; shift 2
  create "$t"
  timed "${pin[@]}" "$tf" ingest --tokenizer "$tokdir/tokenizer.json" --to "kafka://$bootstrap/$t" --partitions 4 \
    --threads 1 --compression "$c" --no-dedup --progress never --stats-json "$work/stats.json" --input "$@"
}
stat() { "$py" -c "import json,sys; print(json.load(open('$work/stats.json'))['$1'])"; }

echo "## Producing: $produce_copies copies of ${#inputs[@]} files, $(du -shL "$corpus" | cut -f1) of JSONL each"
echo
echo "| producer | compression | documents | tokens | wall s | CPU s | docs/s | docs per CPU s | tokens per CPU s |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
prow() { awk -v w="$4" -v c="$5" -v d="$2" -v t="$3" -v what="$1" -v comp="$6" \
  'BEGIN{printf "| %s | %s | %d | %d | %.2f | %.2f | %.0f | %.0f | %.0f |\n", what, comp, d, t, w, c, d/w, d/c, t/c}'; }
declare -A tf_cpu_docs
for comp in lz4 none zstd; do
  read -r w c < <(ingest "tf-$comp" "$comp" "${produce_inputs[@]}")
  d="$(stat documents_written)"; t="$(stat tokens_written)"
  prow "tokenfeed ingest --threads 1" "$d" "$t" "$w" "$c" "$comp"
  tf_cpu_docs[$comp]="$(awk -v d="$d" -v c="$c" 'BEGIN{print d/c}')"
done
declare -A baseline_cpu_docs
for comp in none lz4; do
  read -r w c < <(timed "${pin[@]}" "$py" "$root/bench/kafka/baseline_producer.py" --bootstrap "$bootstrap" \
    --topic "baseline-$comp" --partitions 4 --max-message-bytes 16777216 --compression "$comp" \
    --tokenizer-dir "$tokdir" "${produce_inputs[@]}")
  # The script's own numbers exclude its start-up; the process's are used, as for tokenfeed.
  d="$(field documents)"; t="$(field tokens)"
  prow "baseline (transformers + confluent-kafka, JSON)" "$d" "$t" "$w" "$c" "$comp"
  baseline_cpu_docs[$comp]="$(awk -v d="$d" -v c="$c" 'BEGIN{print d/c}')"
done
echo
awk -v a="${tf_cpu_docs[lz4]}" -v b="${baseline_cpu_docs[none]}" -v c="${tf_cpu_docs[none]}" -v e="${baseline_cpu_docs[lz4]}" \
  'BEGIN{printf "Documents per CPU second, tokenfeed / baseline: %.1fx (tokenfeed lz4 vs the baseline as written, no compression), %.1fx (both uncompressed), %.1fx (both lz4)\n", a/b, c/b, a/e}'
echo

echo "## Bytes: the topics above ($produce_copies copies of the corpus), per compression"
echo
echo "| topic | compression | records | on disk (MB) | on the wire (MB) | bytes per token on disk |"
echo "|---|---|---:|---:|---:|---:|"
tokens_produced="$(stat tokens_written)"
for comp in snappy gzip; do ingest "tf-$comp" "$comp" "${produce_inputs[@]}" >/dev/null; done
for t in tf-none tf-lz4 tf-zstd tf-snappy tf-gzip baseline-none baseline-lz4; do
  disk="$(log_bytes "$t")"; wire="$(wire_bytes "$t")"; n="$(field records)"
  what="tokenfeed records"; [[ "$t" == baseline-* ]] && what="baseline JSON"
  awk -v what="$what" -v comp="${t#*-}" -v n="$n" -v d="$disk" -v w="$wire" -v tok="$tokens_produced" \
    'BEGIN{printf "| %s | %s | %d | %.1f | %.1f | %.2f |\n", what, comp, n, d/1e6, w/1e6, d/tok}'
done
echo

echo "## Consuming: $copies copies of the corpus per topic (median of $reps runs)"
echo
echo "| reader | topic | records/s | MB/s | CPU s | MB per CPU s | records per CPU s |"
echo "|---|---|---:|---:|---:|---:|---:|"
crow() { awk -v what="$1" -v t="$2" -v n="$3" -v b="$4" -v w="$5" -v c="$6" \
  'BEGIN{printf "| %s | %s | %.0f | %.0f | %.2f | %.0f | %.0f |\n", what, t, n/w, b/1e6/w, c, b/1e6/c, n/c}'; }
best() {  # command...: "wall cpu" median by wall over $reps runs; the last run's output stays in out.txt
  local res=""
  for _ in $(seq "$reps"); do res+="$(timed "$@")"$'\n'; done
  printf '%s' "$res" | median
}
for comp in lz4 zstd none; do
  ingest "big-$comp" "$comp" "$work"/copies/*.jsonl >/dev/null
  read -r w c < <(best "${pin[@]}" "$cursor" "kafka://$bootstrap/big-$comp" --parse)
  n="$(field records)"; b="$(field bytes)"
  crow "tokenfeed cursor (cursor_read --parse)" "big-$comp" "$n" "$b" "$w" "$c"
  read -r w c < <(discard=1 best "${pin[@]}" kcat -C -b "$bootstrap" -t "big-$comp" -o beginning -e -q \
    -X fetch.max.bytes=67108864 -X max.partition.fetch.bytes=4194304 -X receive.message.max.bytes=68157440 \
    -X queued.max.messages.kbytes=262144)
  crow "kcat -C (tokenfeed's fetch settings)" "big-$comp" "$n" "$b" "$w" "$c"
  read -r w c < <(best "${pin[@]}" "$py" "$root/bench/kafka/python_consumer.py" --bootstrap "$bootstrap" \
    --topic "big-$comp")
  crow "confluent-kafka Python (bytes only)" "big-$comp" "$(field records)" "$(field bytes)" "$w" "$c"
done
read -r w c < <(best "${pin[@]}" "$py" "$root/bench/kafka/python_consumer.py" --bootstrap "$bootstrap" \
  --topic baseline-none --decode json)
crow "baseline reader: confluent-kafka + json.loads" "baseline-none ($produce_copies copies)" "$(field records)" "$(field bytes)" "$w" "$c"
baseline_tokens_per_cpu="$(awk -v t="$(field tokens)" -v c="$c" 'BEGIN{print t/c}')"
read -r w c < <(best "${pin[@]}" "$cursor" "kafka://$bootstrap/big-lz4" --parse)
echo
awk -v a="$(field tokens)" -v c="$c" -v s="$baseline_tokens_per_cpu" \
  'BEGIN{printf "Tokens per CPU second read and parsed: tokenfeed cursor (lz4) %.0f M, baseline JSON reader %.1f M: %.0fx\n", a/c/1e6, s/1e6, a/c/s}'
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); librdkafka $(pkg-config --modversion rdkafka) (tokenfeed, kcat); confluent-kafka $("$py" -c 'import importlib.metadata as m, confluent_kafka as c; print(m.version("confluent-kafka"), "with librdkafka", c.libversion()[0])'); transformers $("$py" -c 'import transformers; print(transformers.__version__)' 2>/dev/null)"
[ ${#pin[@]} -gt 0 ] && echo "Pinned: broker on CPU 0, clients on CPU 1."
exit 0

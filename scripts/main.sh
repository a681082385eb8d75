#!/usr/bin/env bash
# The main job on a fresh machine: set-up, build, then tokenize a real
# multilingual corpus with the DeepSeek-V3 tokenizer and print the throughput.
# Corpus: $TOKENFEED_CORPUS_DIR, else ../shared/corpus, else multilingual text
# generated from the Faker package's locale data.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash scripts/setup.sh
bash scripts/build.sh release >/dev/null

corpus="${TOKENFEED_CORPUS_DIR:-$root/../shared/corpus}"
inputs=()
if ls "$corpus"/*.jsonl >/dev/null 2>&1; then
  inputs=("$corpus"/*.jsonl)
else
  mkdir -p .cache/demo
  .venv/bin/python scripts/make_sample_corpus.py .cache/demo/sample.jsonl
  inputs=(.cache/demo/sample.jsonl)
fi
tokenizer=.cache/tokenizers/deepseek_v3/tokenizer.json
bytes=$(cat "${inputs[@]}" | wc -c)
for threads in 1 0; do
  start=$(date +%s.%N)
  build/release/src/cli/tokenfeed tokenize --tokenizer "$tokenizer" --threads "$threads" "${inputs[@]}" >.cache/demo-ids.jsonl
  end=$(date +%s.%N)
  lines=$(wc -l <.cache/demo-ids.jsonl)
  label=$([ "$threads" = 1 ] && echo "1 thread" || echo "all cores")
  awk -v b="$bytes" -v s="$start" -v e="$end" -v l="$lines" -v t="$label" \
    'BEGIN { printf "tokenize (%s): %d documents, %.1f MB of JSONL in %.2f s = %.1f MB/s (load and JSON parsing included)\n", t, l, b/1e6, e-s, b/1e6/(e-s) }'
done
echo "ids of the first document: $(head -c 200 .cache/demo-ids.jsonl)..."

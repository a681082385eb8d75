#!/usr/bin/env bash
# The main job on a fresh machine: set-up, build, ingest a real multilingual
# corpus into the embedded log (DeepSeek-V3 tokenizer), then train a small
# GPT-style model on the CPU for about a minute, fed by tokenfeed's loader.
#   bash scripts/main.sh            # embedded log (the default)
#   bash scripts/main.sh --kafka    # the same through a local Apache Kafka broker
# Corpus: $TOKENFEED_CORPUS_DIR, else ../shared/corpus, else multilingual text
# generated from the Faker package's locale data. TOKENFEED_TRAIN_SECONDS
# sets the training time (default 60).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
use_kafka=0
[ "${1:-}" = "--kafka" ] && use_kafka=1

bash scripts/setup.sh
bash scripts/build.sh release >/dev/null
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --config-settings=cmake.define.TOKENFEED_BUILD_CLI=OFF .

corpus="${TOKENFEED_CORPUS_DIR:-$root/../shared/corpus}"
mkdir -p .cache/demo
if ! ls "$corpus"/*.jsonl >/dev/null 2>&1; then
  corpus=.cache/demo/sample
  mkdir -p "$corpus"
  [ -f "$corpus/sample.jsonl" ] || .venv/bin/python scripts/make_sample_corpus.py "$corpus/sample.jsonl"
fi
tokenizer=.cache/tokenizers/deepseek_v3/tokenizer.json
tokenfeed=build/release/src/cli/tokenfeed

if [ "$use_kafka" = 1 ]; then
  bootstrap=$(scripts/kafka-local --dir .cache/demo/kafka start | tail -n 1 | sed 's/^bootstrap=//')
  trap 'scripts/kafka-local --dir .cache/demo/kafka stop >/dev/null 2>&1 || true' EXIT
  uri="kafka://$bootstrap/demo-tokens"
else
  uri="log:.cache/demo/topics/corpus"
fi

echo "== ingest $corpus -> $uri (running it again resumes or finds nothing to do)"
"$tokenfeed" ingest --tokenizer "$tokenizer" --input "$corpus"/*.jsonl --to "$uri" --partitions 4 --add-eos
"$tokenfeed" topics "$uri"

echo "== train a small GPT on the CPU for ${TOKENFEED_TRAIN_SECONDS:-60} s"
.venv/bin/python scripts/train_demo.py --uri "$uri" --seconds "${TOKENFEED_TRAIN_SECONDS:-60}" \
  --checkpoint-dir .cache/demo/checkpoint --plot .cache/demo/training.png

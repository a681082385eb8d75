#!/usr/bin/env bash
# The fuzz targets (fuzz/, docs/testing.md) as libFuzzer programs under
# AddressSanitizer + UndefinedBehaviorSanitizer, each run for a bounded time
# from its seed corpus. Built with clang into build/fuzz (the libraries too,
# with coverage instrumentation, so libFuzzer sees their branches). New
# inputs libFuzzer finds go to build/fuzz/found/TARGET, never into the tree;
# a crash leaves its input in build/fuzz/crash-TARGET-* and fails the run.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 20, all)
# FUZZ_SEED=N fixes libFuzzer's seed and starts from the seed corpus alone,
# so that a run (the test suite's) makes the same mutations in the same order
# every time (how many it reaches in the time depends on the machine's
# speed); unset, each run explores from a new seed and from what earlier runs
# found.
# Needs scripts/setup.sh first (clang, the pinned Oniguruma).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
seconds="${1:-20}"
shift || true
build="$root/build/fuzz"
flags="-O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1 \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DTOKENFEED_BUILD_FUZZ=ON -DTOKENFEED_BUILD_TESTS=OFF -DTOKENFEED_BUILD_BENCH=OFF \
  -DTOKENFEED_BUILD_CLI=OFF -DTOKENFEED_BUILD_PYTHON=OFF -DTOKENFEED_WITH_PARQUET=OFF >/dev/null
# "name corpus" per line, written by fuzz/CMakeLists.txt for every target.
mapfile -t all_targets < "$build/fuzz_targets.txt"
selected=()
for entry in "${all_targets[@]}"; do
  [ -n "$entry" ] || continue
  name="${entry%% *}"
  if [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx "$name"; then selected+=("$entry"); fi
done
[ ${#selected[@]} -gt 0 ] || { echo "fuzz: no such target: $*" >&2; exit 2; }
names=()
for entry in "${selected[@]}"; do names+=("${entry%% *}"); done
cmake --build "$build" -j "$(nproc)" --target "${names[@]}"

export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
total_runs=0
for entry in "${selected[@]}"; do
  name="${entry%% *}"
  corpus="${entry#* }"
  program="$(find "$build/fuzz" -type f -name "$name" -perm -u+x | head -n 1)"
  [ -n "$program" ] || { echo "fuzz: $name was not built" >&2; exit 1; }
  found="$build/found/$name"
  if [ -n "${FUZZ_SEED:-}" ]; then
    # A seeded run starts from the seed corpus alone, not from what earlier
    # runs added, so that it makes the same mutations each time.
    found="$build/found-seeded/$name"
    rm -rf "$found"
  fi
  mkdir -p "$found"
  log="$build/$name.log"
  # -timeout: one input may take at most 10 s; -rss_limit_mb: allocations
  # must follow checked sizes; -max_len: enough for the seed files.
  seed_flag=()
  if [ -n "${FUZZ_SEED:-}" ]; then seed_flag=(-seed="$FUZZ_SEED"); fi
  if ! "$program" "${seed_flag[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$build/crash-$name-" "$found" "$corpus" >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $name found a failure (log: $log; input: $build/crash-$name-*)" >&2
    exit 1
  fi
  runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)"
  total_runs=$((total_runs + runs))
  echo "fuzz: $name: ${seconds} s, $runs inputs, no finding"
done
echo "fuzz: all ${#selected[@]} targets clean, $total_runs inputs"

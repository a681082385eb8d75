#!/usr/bin/env bash
# The tests under the sanitizers (docs/testing.md says what runs and why):
#   asan  the C++ suite under AddressSanitizer + UndefinedBehaviorSanitizer
#         (all but the tests that need a Kafka broker), the fuzz targets'
#         replays, and the Python tests of the tokenizer, the loader and
#         Arrow stream ingest against a module built with the same sanitizers;
#   tsan  the tests of the components that run threads, under
#         ThreadSanitizer.
# Usage: scripts/sanitize.sh [asan|tsan|all]   (default: all)
# Needs scripts/setup.sh first (the virtual environment, the tokenizer files).
# Exits non-zero on the first finding or failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
what="${1:-all}"
jobs="$(nproc)"
py="$root/.venv/bin/python"

configure() {
  cmake --preset "$1" -DPython_EXECUTABLE="$py" >/dev/null
}

run_asan() {
  local started=$SECONDS
  configure asan
  cmake --build --preset asan -j "$jobs"
  # halt_on_error: the first report fails the test. Leaks are checked for
  # the C++ tests (each process is ours alone).
  ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_string_checks=1" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
    ctest --preset asan -j "$jobs" --timeout 900 -LE '^kafka(-cluster)?$'

  # The Python module under the same sanitizers: the interpreter is not
  # instrumented, so the runtime is preloaded; CPython's own allocations are
  # never freed at exit, hence no leak check here.
  local stage
  stage="$(bash scripts/stage-python.sh build/asan)"
  local preload
  preload="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  LD_PRELOAD="$preload" PYTHONPATH="$stage" \
  ASAN_OPTIONS="detect_leaks=0:halt_on_error=1" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  TOKENFEED_REQUIRE_REFERENCE=1 TOKENFEED_TOKENIZERS_DIR="$root/.cache/tokenizers" \
  TOKENFEED_CLI="$root/build/asan/src/cli/tokenfeed" TOKENFEED_PYTHON="$py" \
    "$py" -m pytest -q -p no:cacheprovider -n "$jobs" --dist loadfile \
      python/tests/test_tokenizer_api.py python/tests/test_tokenizer_components.py python/tests/test_regex_path_parity.py \
      python/tests/test_dataset.py python/tests/test_ingest_arrow_stream.py
  echo "sanitize: asan passed in $((SECONDS - started)) s"
}

# The components with threads of their own: the loader's prefetch, the log's
# readers beside its writer, the tokenizer's batch encoding, the document
# readers, the metrics endpoint (serve's and the loader's).
tsan_targets=(loader_test sharded_loader_test follow_loader_test loader_unit_test base_test log_test log_tail_follow_test topic_test tokenizer_test text_test serve_unit_test metrics_unit_test)

run_tsan() {
  local started=$SECONDS
  configure tsan
  cmake --build --preset tsan -j "$jobs" --target "${tsan_targets[@]}"
  TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
    ctest --preset tsan -j "$jobs" --timeout 900 -LE '^kafka(-cluster)?$' \
      -R '^(Loader|ShardedLoader|FollowLoader|Prefetcher|ThreadGuard|SourceSet|Partition|Topic|Segment|SmallSegments|Tail|LogCursor|RegexMatcher|FastMatchers|Tokenizer|EncodeBatch|DocumentReader|ByteSource|LineWindow|MetricsHttp|ServeMetrics|RawMessage)'
  echo "sanitize: tsan passed in $((SECONDS - started)) s"
}

case "$what" in
  asan) run_asan ;;
  tsan) run_tsan ;;
  all) run_asan; run_tsan ;;
  *) echo "usage: scripts/sanitize.sh [asan|tsan|all]" >&2; exit 2 ;;
esac

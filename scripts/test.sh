#!/usr/bin/env bash
# The whole test suite on a fresh machine: set-up, build, the C++ tests
# (ctest) and the Python tests (pytest), then the sanitizer runs
# (scripts/sanitize.sh) and brief fuzz runs (scripts/fuzz.sh). Exits non-zero
# if anything fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash scripts/setup.sh
# Parquet input is built and tested (pyarrow's Arrow C++ from the set-up), and
# the Python extension module is built with the rest: the Python tests import
# the package laid out from this build (scripts/stage-python.sh), so the
# library is compiled once for both. test_pip_install.py builds, installs and
# tests the wheel itself from a clean copy.
TOKENFEED_WITH_PARQUET=ON TOKENFEED_BUILD_PYTHON=ON bash scripts/build.sh release

# Tests that need the reference tokenizer or the tokenizer files fail instead
# of skipping when this is set: the set-up above provides them.
export TOKENFEED_REQUIRE_REFERENCE=1
export TOKENFEED_TOKENIZERS_DIR="$root/.cache/tokenizers"
export TOKENFEED_PYTHON="$root/.venv/bin/python"
export TOKENFEED_CLI="$root/build/release/src/cli/tokenfeed"

ctest --preset release -j 2 --timeout 900

if [ -d python/tests ] && ls python/tests/test_*.py >/dev/null 2>&1; then
  # One build of the package, imported by both test environments (a copy
  # installed into either, as earlier versions of this script left, comes
  # second to PYTHONPATH).
  PYTHONPATH="$(bash scripts/stage-python.sh build/release)"
  export PYTHONPATH
  # Two workers, each given whole files (their module fixtures, a broker
  # cluster among them, start once): most of the suite waits on brokers,
  # servers and killed processes, and the rest has the second core.
  .venv/bin/python -m pytest -q -n 2 --dist loadfile python/tests
  # The PyTorch-facing tests again against the current PyTorch from PyPI
  # (python/requirements-torch.txt): the dataset, torchrun with gloo and
  # SIGKILL, the loader over Kafka topics with gaps, the training demo.
  bash scripts/setup-torch.sh
  .venv-torch/bin/python -m pytest -q -n 2 --dist loadfile python/tests/test_dataset.py python/tests/test_distributed.py \
    python/tests/test_loader_kafka_gaps.py python/tests/test_demo.py
  unset PYTHONPATH
fi
# The same suite's core under the sanitizers (docs/testing.md, ~17 min here).
bash scripts/sanitize.sh all
# Every fuzz target under libFuzzer with ASan+UBSan, briefly (~5 min here).
# The seed is fixed: the suite's verdict does not depend on which mutations a
# run happened to try. Longer exploratory runs (docs/testing.md) use new seeds.
FUZZ_SEED=1 bash scripts/fuzz.sh 15
echo "test: all tests passed"

#!/usr/bin/env bash
# Configures and builds tokenfeed with a CMake preset (default: release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
preset="${1:-release}"
# TOKENFEED_WITH_PARQUET=ON|OFF|AUTO and TOKENFEED_BUILD_PYTHON=ON|OFF in the
# environment set the CMake options of those names (scripts/test.sh asks for
# Parquet and for the extension module, which scripts/stage-python.sh lays out).
cmake --preset "$preset" -DPython_EXECUTABLE="$root/.venv/bin/python" \
  ${TOKENFEED_WITH_PARQUET:+-DTOKENFEED_WITH_PARQUET="$TOKENFEED_WITH_PARQUET"} \
  ${TOKENFEED_BUILD_PYTHON:+-DTOKENFEED_BUILD_PYTHON="$TOKENFEED_BUILD_PYTHON"} >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"

#!/usr/bin/env bash
# Configures and builds tokenfeed with a CMake preset (default: release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
preset="${1:-release}"
# TOKENFEED_WITH_PARQUET=ON|OFF|AUTO in the environment sets the CMake option
# of that name (scripts/test.sh asks for ON).
cmake --preset "$preset" -DPython_EXECUTABLE="$root/.venv/bin/python" \
  ${TOKENFEED_WITH_PARQUET:+-DTOKENFEED_WITH_PARQUET="$TOKENFEED_WITH_PARQUET"} >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"

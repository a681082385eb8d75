#!/usr/bin/env bash
# Configures and builds tokenfeed with a CMake preset (default: release).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
preset="${1:-release}"
cmake --preset "$preset" -DPython_EXECUTABLE="$root/.venv/bin/python" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"

#!/usr/bin/env bash
# Lays out the tokenfeed package from a CMake build tree (one configured with
# TOKENFEED_BUILD_PYTHON=ON) so that Python imports it without installing:
# the package's .py files and the extension module built in BUILD_DIR go to
# BUILD_DIR/python-stage/tokenfeed, and the stage's directory is printed
# (put it on PYTHONPATH). The test suite tests this layout; the installed
# wheel itself is tested by python/tests/test_pip_install.py. A source build's
# module finds the Arrow plugin and the program in the build tree.
#   bash scripts/stage-python.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:?usage: scripts/stage-python.sh BUILD_DIR}")"
modules=("$build"/python/_ext*.so)
[ -f "${modules[0]}" ] || { echo "stage-python: no extension module in $build/python (configure with -DTOKENFEED_BUILD_PYTHON=ON)" >&2; exit 1; }
stage="$build/python-stage"
rm -rf "$stage"
mkdir -p "$stage/tokenfeed"
cp "$root"/python/tokenfeed/*.py "$root"/python/tokenfeed/*.pyi "$root"/python/tokenfeed/py.typed "$stage/tokenfeed/"
cp "${modules[@]}" "$stage/tokenfeed/"
echo "$stage"

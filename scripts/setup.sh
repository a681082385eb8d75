#!/usr/bin/env bash
# Everything a fresh Debian machine needs before tokenfeed builds and its tests
# run: Debian packages, the pinned Oniguruma source, the tokenizer files, and a
# Python virtual environment (.venv) with the pinned packages. Idempotent: a
# second run finds everything in place and changes nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

bash scripts/install-deps.sh
bash scripts/fetch-oniguruma.sh
bash scripts/fetch-tokenizers.sh
bash scripts/fetch-kafka.sh

venv="$root/.venv"
if [ ! -x "$venv/bin/python" ]; then
  # Debian's python3 with its system site packages: python3-torch and numpy.
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(sha256sum python/requirements-dev.txt | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-dev.txt
  echo "$want" >"$stamp"
fi
# The wheel test (python/tests/test_pip_install.py) builds and installs the
# wheel without asking a package index: what the isolated build requires
# (pyproject.toml's [build-system], pyarrow among them), the package's
# dependencies and the pinned pyarrow of the `parquet` extra, as wheels in
# .cache/wheels, downloaded again only when that list changes.
wanted="$("$venv/bin/python" -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]))')
$(grep -o '^pyarrow==[0-9.]*' python/requirements-dev.txt)"
if [ "$(cat .cache/wheels/wanted.txt 2>/dev/null)" != "$wanted" ]; then
  mkdir -p .cache/wheels
  printf '%s\n' "$wanted" >.cache/wheels/requirements.in
  "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    -d .cache/wheels -r .cache/wheels/requirements.in
  printf '%s' "$wanted" >.cache/wheels/wanted.txt
fi
echo "setup: ready (virtual environment in .venv)"

#!/usr/bin/env bash
# The second Python environment of the test suite: .venv-torch, a virtual
# environment WITHOUT Debian's site packages, holding the current PyTorch
# from PyPI (pinned in python/requirements-torch.txt; about 5 GB with the
# CUDA libraries PyTorch's Linux wheels depend on, which run fine without a
# GPU). scripts/test.sh runs the PyTorch-facing Python tests in it as well
# as in .venv (Debian's PyTorch 1.13). Idempotent: a second run with the same
# requirements changes nothing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

venv="$root/.venv-torch"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(cat python/requirements-torch.txt python/requirements-dev.txt | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r python/requirements-torch.txt
  echo "$want" >"$stamp"
fi
"$venv/bin/python" -c 'import torch; print("setup-torch: ready (PyTorch " + torch.__version__ + " in .venv-torch)")'

"""The package built the way the README says: `pip install .` in a fresh
virtual environment, from a copy of the repository with nothing built or
fetched in it (no third_party/, no build/). The regex-path tokenizers (GPT-4o's
Split with `invert`, gpt-oss), which depend on the pinned Oniguruma, must give
the reference's ids from that install.

Takes a few minutes: it compiles the extension module from scratch."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, missing, tokenizer_path
from test_regex_path_parity import BACKTRACKING, REGEX_VOCABULARIES, tiny_tokenizer
from test_tokenizer_parity import TARGETED

PROBE = r"""
import json, sys
import tokenfeed
args = json.load(open(sys.argv[1], encoding="utf-8"))
out = {"module": tokenfeed.__file__, "ids": {}}
for name, path in args["tokenizers"].items():
    tok = tokenfeed.Tokenizer.from_file(path)
    out["ids"][name] = {"one": [tok.encode(t) for t in args["texts"]], "batch": tok.encode_batch(args["texts"])}
bad = tokenfeed.Tokenizer.from_str(args["backtracking"])
try:
    bad.encode_batch(["ok"] * 50 + [" " * 6000 + "b"])
    out["error"] = None
except ValueError as e:
    out["error"] = str(e)
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"))
"""


def clean_copy(dest: pathlib.Path) -> None:
    """The repository's files as a fresh clone has them (tracked, plus new
    files not ignored), without build outputs, caches or third_party/."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.split(b"\0")
    for raw in listed:
        if not raw:
            continue
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file():
            continue  # deleted in the work tree
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def test_pip_install_from_a_clean_copy_gives_the_references_ids(tmp_path, documents):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        missing("not a git checkout: cannot make a clean copy")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        missing("the reference package 'tokenizers' is not installed")
    paths = {}
    for name in REGEX_VOCABULARIES:
        p = tokenizer_path(name)
        if not p.exists():
            missing(f"tokenizer file {p} is missing")
        paths[name] = str(p)

    src = tmp_path / "src"
    clean_copy(src)
    assert not (src / "third_party").exists() and not (src / "build").exists()
    venv = tmp_path / "venv"
    base_python = getattr(sys, "_base_executable", None) or shutil.which("python3")
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(os.cpu_count() or 2)
    build = subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "."], cwd=src,
                           env=env, capture_output=True, text=True)
    assert build.returncode == 0, f"pip install . failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    # The build fetched the pinned Oniguruma itself.
    header = (src / "third_party" / "oniguruma" / "src" / "oniguruma.h").read_text()
    assert "ONIGURUMA_VERSION_TEENY   10" in header

    _, docs = documents
    texts = list(TARGETED) + [d[:2000] for d in docs[:: max(1, len(docs) // 300)]]
    args = tmp_path / "args.json"
    args.write_text(json.dumps({"tokenizers": paths, "texts": texts,
                                "backtracking": json.dumps(tiny_tokenizer(BACKTRACKING))}))
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE)
    result = tmp_path / "result.json"
    run = subprocess.run([str(py), str(probe), str(args), str(result)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    got = json.loads(result.read_text())
    assert got["module"].startswith(str(venv)), got["module"]
    for name, path in paths.items():
        ref = Tokenizer.from_file(path)
        ref.no_truncation()
        ref.no_padding()
        want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=False)]
        assert got["ids"][name]["one"] == want, name
        assert got["ids"][name]["batch"] == want, name
    assert got["error"] is not None and "retry-limit-in-match over" in got["error"], got["error"]
    assert "text 50" in got["error"]

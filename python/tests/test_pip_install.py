"""The package as a user installs it: the wheel built from a copy of the
repository with nothing built or fetched in it (no third_party/, no build/),
by `pip wheel .` (the same PEP 517 build `pip install .` runs) and made
self-contained by auditwheel (scripts/build-wheel.sh), installed into a fresh
virtual environment without system site packages.

- The regex-path tokenizers (GPT-4o's Split with `invert`, gpt-oss), which
  depend on the pinned Oniguruma the build fetches itself, give the
  reference's ids from that install.
- The wheel installs a `tokenfeed` command that works, and neither it nor the
  module loads a native library from outside the wheel except the C and C++
  runtimes every manylinux system has.

Takes a few minutes: it compiles the module and the program from scratch."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, missing, tokenizer_path
from test_regex_path_parity import BACKTRACKING, REGEX_VOCABULARIES, tiny_tokenizer
from test_tokenizer_parity import TARGETED

# What a manylinux wheel may take from the system (the manylinux policy's
# libraries that tokenfeed uses).
SYSTEM_LIBRARIES = {"linux-vdso.so.1", "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
                    "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libresolv.so.2"}

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


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(venv python, venv directory, source copy) with the repaired wheel installed."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        missing("not a git checkout: cannot make a clean copy")
    try:
        import auditwheel  # noqa: F401
    except ImportError:
        missing("auditwheel is not installed (python/requirements-dev.txt)")
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    clean_copy(src)
    assert not (src / "third_party").exists() and not (src / "build").exists()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(os.cpu_count() or 2)
    build = subprocess.run(["bash", "scripts/build-wheel.sh", str(tmp / "wheelhouse"), sys.executable], cwd=src,
                           env=env, capture_output=True, text=True)
    assert build.returncode == 0, f"build-wheel.sh failed:\n{build.stdout[-4000:]}\n{build.stderr[-4000:]}"
    wheels = sorted((tmp / "wheelhouse").glob("tokenfeed-*manylinux*.whl"))
    assert len(wheels) == 1, build.stdout
    # The build fetched the pinned Oniguruma itself.
    header = (src / "third_party" / "oniguruma" / "src" / "oniguruma.h").read_text()
    assert "ONIGURUMA_VERSION_TEENY   10" in header

    venv = tmp / "venv"
    base_python = getattr(sys, "_base_executable", None) or shutil.which("python3")
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheels[0])],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return py, venv, src, env


def test_the_installed_wheel_gives_the_references_ids_on_the_regex_path(installed, tmp_path, documents):
    py, venv, _, env = installed
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


def native_dependencies(path: pathlib.Path) -> dict[str, str]:
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    deps = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+)(?: => (\S+))?", line)
        if m:
            deps[m.group(1)] = m.group(2) or m.group(1)
    return deps


def test_the_wheel_brings_its_libraries_and_a_working_tokenfeed_command(installed, tmp_path):
    py, venv, _, env = installed
    package = pathlib.Path(subprocess.run([str(py), "-c", "import tokenfeed, os; print(os.path.dirname("
                                                         "tokenfeed.__file__))"], env=env, capture_output=True,
                                          text=True, check=True).stdout.strip())
    natives = [package / "_bin" / "tokenfeed", *package.glob("_ext*.so")]
    assert len(natives) == 2, natives
    for native in natives:
        for name, where in native_dependencies(native).items():
            if name in SYSTEM_LIBRARIES or name.startswith("/lib") or "ld-linux" in name:
                continue
            assert where.startswith(str(venv)), f"{native.name} loads {name} from {where}, outside the wheel"

    command = venv / "bin" / "tokenfeed"
    assert command.exists()
    clean_env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(tmp_path), "LD_LIBRARY_PATH": ""}
    version = subprocess.run([str(command), "--version"], env=clean_env, capture_output=True, text=True)
    assert version.returncode == 0 and "0.1.0" in version.stdout + version.stderr, (version.stdout, version.stderr)
    tokenizer = tokenizer_path("deepseek_v3")
    if not tokenizer.exists():
        missing(f"tokenizer file {tokenizer} is missing")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"document {i} über 数据"}) + "\n" for i in range(20)))
    uri = f"log:{tmp_path}/topics/t"
    ingest = subprocess.run([str(command), "ingest", "--tokenizer", str(tokenizer), "--input", str(corpus), "--to",
                             uri], env=clean_env, capture_output=True, text=True, timeout=300)
    assert ingest.returncode == 0, ingest.stderr
    inspect = subprocess.run([str(command), "inspect", uri, "--json"], env=clean_env, capture_output=True,
                             text=True, timeout=300)
    assert inspect.returncode == 0, inspect.stderr
    assert len(inspect.stdout.splitlines()) == 20
    # The wheel is built without Parquet input (pyproject.toml): a Parquet file
    # is refused before anything is written, saying so.
    parquet = tmp_path / "rows.parquet"
    parquet.write_bytes(b"PAR1" + bytes([0x15, 0x04, 0x15, 0x80, 0x01]) + b"values" * 20 + bytes([0x1C, 0, 0, 0])
                        + b"PAR1")
    refused = subprocess.run([str(command), "ingest", "--tokenizer", str(tokenizer), "--input", str(parquet),
                              "--to", f"log:{tmp_path}/topics/p"], env=clean_env, capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode == 1 and "Parquet support was not built in" in refused.stderr, refused.stderr
    # A usage error keeps the program's exit status through the wrapper.
    bad = subprocess.run([str(command), "no-such-command"], env=clean_env, capture_output=True, text=True)
    assert bad.returncode != 0

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
  runtimes every manylinux system has, and pyarrow's own libraries for the
  Arrow plugin.
- Without pyarrow, Parquet and s3:// inputs are refused by the command and the
  module with a message naming the `parquet` extra; JSONL still works. With
  `tokenfeed[parquet]`, FineWeb-style Parquet gives the records
  of the same documents in JSONL, through the command and through the module
  (with pyarrow imported before and after), and so do Parquet objects on an
  S3 server (moto on 127.0.0.1).

pip asks no package index: the build's requirements (pyarrow among them),
numpy and pyarrow come from the wheels scripts/setup.sh keeps in .cache/wheels.
Takes a few minutes: it compiles the module and the program from scratch (one
wheel, installed into two environments)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from cli_helpers import write_jsonl
from conftest import ROOT, missing, tokenizer_path
from table_helpers import fineweb_table, texts_for
from test_regex_path_parity import BACKTRACKING, REGEX_VOCABULARIES, tiny_tokenizer
from test_tokenizer_parity import TARGETED

# What the build and the installs take instead of a package index: the wheels
# scripts/setup.sh downloads (the build's requirements, numpy, and pyarrow at
# python/requirements-dev.txt's pin).
LOCAL_WHEELS = ROOT / ".cache" / "wheels"
# What the loader says when the plugin is there but pyarrow 25.0.x is not.
NEEDS_PYARROW = "Parquet and s3:// inputs need pyarrow 25.0.x (libarrow.so.2500): pip install 'tokenfeed[parquet]'"

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
    if not (LOCAL_WHEELS / "wanted.txt").exists() or not any(LOCAL_WHEELS.glob("pyarrow-25.0.*.whl")):
        missing(f"no local wheels in {LOCAL_WHEELS}")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))}
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = str(os.cpu_count() or 2)
    # pip (the isolated build's requirements, pyarrow among them, and the
    # installs below) takes the local wheels, not an index.
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=str(LOCAL_WHEELS), PIP_DISABLE_PIP_VERSION_CHECK="1")
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
    return py, venv, wheels[0], env


@pytest.fixture(scope="module")
def installed_with_pyarrow(installed, tmp_path_factory):
    """(venv python, venv directory) with the same wheel and its `parquet`
    extra (pyarrow from the local wheels)."""
    _, _, wheel, env = installed
    venv = tmp_path_factory.mktemp("wheel-parquet") / "venv"
    base_python = getattr(sys, "_base_executable", None) or shutil.which("python3")
    subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "--quiet", f"{wheel}[parquet]"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-4000:]
    return py, venv


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
        if m:  # the dynamic loader does not fold `dir/../` ($ORIGIN/../pyarrow)
            deps[m.group(1)] = os.path.normpath(m.group(2) or m.group(1))
    return deps


def package_dir(py: pathlib.Path, env) -> pathlib.Path:
    return pathlib.Path(subprocess.run([str(py), "-c", "import tokenfeed, os; print(os.path.dirname("
                                                      "tokenfeed.__file__))"], env=env, capture_output=True,
                                       text=True, check=True).stdout.strip())


def wheel_dirs(package: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """Where the wheel's native code lies: the package, and the libraries
    auditwheel grafted beside it."""
    return package, package.parent / "tokenfeed.libs"


def from_system_or(path: str, *allowed: pathlib.Path) -> bool:
    """Whether a library (the path it resolved to) is a manylinux system
    library (by name) or lies under one of `allowed`."""
    name = os.path.basename(path)
    return (name in SYSTEM_LIBRARIES or "ld-linux" in name or name == "linux-vdso.so.1"
            or any(path.startswith(str(a) + os.sep) for a in allowed))


def clean_environment(venv: pathlib.Path, home: pathlib.Path) -> dict[str, str]:
    return {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "HOME": str(home), "LD_LIBRARY_PATH": ""}


def run_command(venv: pathlib.Path, env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "tokenfeed"), *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=300)


def deepseek() -> pathlib.Path:
    tokenizer = tokenizer_path("deepseek_v3")
    if not tokenizer.exists():
        missing(f"tokenizer file {tokenizer} is missing")
    return tokenizer


def topic_content(venv: pathlib.Path, env, uri: str) -> list[tuple]:
    """What each record of a topic says about its document, read with the
    wheel's command: (partition, doc_seq, ids)."""
    r = run_command(venv, env, "inspect", uri, "--json")
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    return [(x["partition"], x["doc_seq"], x["ids"]) for x in recs]


def fineweb_corpus(d: pathlib.Path, texts) -> tuple[pathlib.Path, pathlib.Path]:
    """The texts as FineWeb-style Parquet (two files, several row groups) and
    as JSONL (the same two files): (parquet directory, JSONL directory)."""
    import pyarrow.parquet as pq
    pq_dir, js_dir = d / "pq", d / "js"
    pq_dir.mkdir(parents=True)
    js_dir.mkdir(parents=True)
    half = len(texts) // 2
    pq.write_table(fineweb_table(texts[:half]), pq_dir / "a.parquet", compression="snappy", row_group_size=100)
    pq.write_table(fineweb_table(texts[half:], half), pq_dir / "b.parquet", compression="zstd", row_group_size=70)
    write_jsonl(js_dir / "a.jsonl", texts[:half])
    write_jsonl(js_dir / "b.jsonl", texts[half:])
    return pq_dir, js_dir


def test_the_wheel_brings_its_libraries_and_a_working_tokenfeed_command(installed, tmp_path):
    py, venv, _, env = installed
    package = package_dir(py, env)
    natives = [package / "_bin" / "tokenfeed", *package.glob("_ext*.so")]
    assert len(natives) == 2, natives
    for native in natives:
        for name, where in native_dependencies(native).items():
            assert from_system_or(where, *wheel_dirs(package)), \
                f"{native.name} loads {name} from {where}, outside the wheel"

    command = venv / "bin" / "tokenfeed"
    assert command.exists()
    clean_env = clean_environment(venv, tmp_path)
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
    # A usage error keeps the program's exit status through the wrapper.
    bad = subprocess.run([str(command), "no-such-command"], env=clean_env, capture_output=True, text=True)
    assert bad.returncode != 0


# Runs in a venv's python: Parquet through the module, pyarrow imported before
# (when asked) and after it in the same process; the shared objects the
# ingest mapped that were not mapped before it.
MODULE_PARQUET = r"""
import json, sys
args = json.load(open(sys.argv[1], encoding="utf-8"))
if args["pyarrow_first"]:
    import pyarrow.parquet
import tokenfeed

def mapped():
    return {line.split()[-1] for line in open("/proc/self/maps") if len(line.split()) >= 6 and ".so" in line}

before = mapped()
out = {"maps": []}
try:
    stats = tokenfeed.ingest(args["input"], to=args["to"], tokenizer=args["tokenizer"], partitions=3,
                             progress="never")
    out["written"] = stats["documents_written"]
except tokenfeed.TokenfeedError as e:
    out["error"] = f"{type(e).__name__}: {e}"
out["maps"] = sorted(mapped() - before)
if args["pyarrow_after"]:
    import pyarrow.parquet as pq
    out["rows"] = sum(pq.read_table(f).num_rows for f in args["files"])
json.dump(out, open(sys.argv[2], "w", encoding="utf-8"))
"""


def module_ingest(py, env, tmp_path, source, topic, *, pyarrow_first=False, pyarrow_after=False, files=()):
    args, result, probe = tmp_path / f"{topic}.json", tmp_path / f"{topic}.out.json", tmp_path / "probe_parquet.py"
    probe.write_text(MODULE_PARQUET)
    args.write_text(json.dumps({"input": str(source), "to": f"log:{tmp_path}/{topic}", "tokenizer": str(deepseek()),
                                "pyarrow_first": pyarrow_first, "pyarrow_after": pyarrow_after,
                                "files": [str(f) for f in files]}))
    run = subprocess.run([str(py), str(probe), str(args), str(result)], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(result.read_text())


def test_without_pyarrow_parquet_and_s3_are_refused_naming_the_extra(installed, tmp_path):
    py, venv, _, _ = installed
    env = clean_environment(venv, tmp_path)
    pq_dir, js_dir = fineweb_corpus(tmp_path / "in", texts_for(40, seed=30))
    parquet = pq_dir / "a.parquet"
    # Refused before anything is written, even beside JSONL that could be read.
    for source in ([js_dir, parquet], ["s3://corpus/crawl/"]):
        r = run_command(venv, env, "ingest", "--tokenizer", deepseek(), "--input", *source, "--to",
                        f"log:{tmp_path}/topics/refused", "--progress", "never")
        assert r.returncode == 1, (r.returncode, r.stderr)
        assert NEEDS_PYARROW in r.stderr, r.stderr
        assert ".so.2500: cannot open shared object file" in r.stderr, r.stderr  # the dynamic loader's word
        assert not (tmp_path / "topics" / "refused").exists()
    assert f"input '{parquet}': {NEEDS_PYARROW}" in run_command(
        venv, env, "ingest", "--tokenizer", deepseek(), "--input", parquet, "--to", f"log:{tmp_path}/topics/r",
        "--progress", "never").stderr
    got = module_ingest(py, env, tmp_path, parquet, "module_refused")
    assert got["error"].startswith("UnsupportedError: ") and NEEDS_PYARROW in got["error"], got
    assert not (tmp_path / "module_refused").exists()
    assert not [p for p in got["maps"] if "arrow" in p], got["maps"]  # nothing of the plugin stays mapped
    # JSONL needs nothing of this.
    got = module_ingest(py, env, tmp_path, js_dir, "module_jsonl")
    assert got.get("written") == 40, got
    r = run_command(venv, env, "ingest", "--tokenizer", deepseek(), "--input", js_dir, "--to",
                    f"log:{tmp_path}/topics/jsonl", "--progress", "never")
    assert r.returncode == 0, r.stderr


def test_the_arrow_plugin_takes_only_pyarrows_libraries_from_outside_the_wheel(installed_with_pyarrow, tmp_path):
    py, venv = installed_with_pyarrow
    env = clean_environment(venv, tmp_path)
    package = package_dir(py, env)
    plugin = package / "libtokenfeed_arrow.so"
    assert plugin.is_file()
    pyarrow = package.parent / "pyarrow"
    # Its search path is relative to itself: pyarrow's directory of the same
    # site-packages, nothing of the machine that built it.
    dynamic = subprocess.run(["readelf", "-d", str(plugin)], capture_output=True, text=True, check=True).stdout
    paths = [p for m in re.finditer(r"\((?:RPATH|RUNPATH)\).*\[(.*)\]", dynamic) for p in m.group(1).split(":")]
    assert "$ORIGIN/../pyarrow" in paths and all(p.startswith("$ORIGIN") for p in paths), paths
    deps = native_dependencies(plugin)
    assert deps["libarrow.so.2500"] == str(pyarrow / "libarrow.so.2500"), deps
    assert deps["libparquet.so.2500"] == str(pyarrow / "libparquet.so.2500"), deps
    for name, where in deps.items():
        assert from_system_or(where, *wheel_dirs(package), pyarrow), f"the plugin loads {name} from {where}"
    # What the program loads while it reads Parquet, in the dynamic loader's
    # own account (the program itself: the `tokenfeed` wrapper is Python).
    pq_dir, _ = fineweb_corpus(tmp_path / "in", texts_for(50, seed=32))
    r = subprocess.run([str(package / "_bin" / "tokenfeed"), "ingest", "--tokenizer", str(deepseek()), "--input",
                        str(pq_dir), "--to", f"log:{tmp_path}/topics/pq", "--progress", "never"],
                       env={**env, "LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(tmp_path / "ld")},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    loaded = {os.path.normpath(m.group(1)) for f in tmp_path.glob("ld.*")
              for m in re.finditer(r"calling init: (\S+)", f.read_text())}
    assert str(plugin) in loaded and str(pyarrow / "libarrow.so.2500") in loaded, loaded
    outside = [p for p in loaded if not from_system_or(p, *wheel_dirs(package), pyarrow)]
    assert outside == [], outside


@pytest.mark.parametrize("pyarrow_first", [True, False], ids=["pyarrow-imported-first", "pyarrow-imported-after"])
def test_with_pyarrow_parquet_gives_the_records_of_the_same_jsonl(installed_with_pyarrow, tmp_path, pyarrow_first):
    py, venv = installed_with_pyarrow
    env = clean_environment(venv, tmp_path)
    package = package_dir(py, env)
    texts = texts_for(500, seed=33)
    pq_dir, js_dir = fineweb_corpus(tmp_path / "in", texts)
    for topic, source in (("pq", pq_dir), ("js", js_dir)):
        r = run_command(venv, env, "ingest", "--tokenizer", deepseek(), "--input", source, "--to",
                        f"log:{tmp_path}/cli_{topic}", "--partitions", "3", "--progress", "never")
        assert r.returncode == 0, r.stderr
    want = topic_content(venv, env, f"log:{tmp_path}/cli_js")
    assert len(want) == len(texts)
    assert topic_content(venv, env, f"log:{tmp_path}/cli_pq") == want
    # The module, with pyarrow's Python side imported before or after the
    # plugin loaded pyarrow's libarrow in the same process.
    files = sorted(pq_dir.iterdir())
    got = module_ingest(py, env, tmp_path, pq_dir, "module_pq", pyarrow_first=pyarrow_first, pyarrow_after=True,
                        files=files)
    assert got.get("written") == len(texts) and got["rows"] == len(texts), got
    assert topic_content(venv, env, f"log:{tmp_path}/module_pq") == want
    assert str(package / "libtokenfeed_arrow.so") in got["maps"], got["maps"]
    outside = [p for p in got["maps"] if not from_system_or(p, *wheel_dirs(package), package.parent / "pyarrow")]
    assert outside == [], outside


def test_with_pyarrow_s3_objects_give_the_records_of_the_same_local_jsonl(installed_with_pyarrow, tmp_path):
    try:
        import boto3
        from test_ingest_s3 import KEYS, moto_server
    except ImportError:
        missing("moto[server] or boto3 is not installed (python/requirements-dev.txt)")
    _, venv = installed_with_pyarrow
    env = clean_environment(venv, tmp_path)
    pq_dir, js_dir = fineweb_corpus(tmp_path / "in", texts_for(400, seed=34, newlines=False))
    r = run_command(venv, env, "ingest", "--tokenizer", deepseek(), "--input", js_dir, "--to",
                    f"log:{tmp_path}/local", "--partitions", "2", "--progress", "never")
    assert r.returncode == 0, r.stderr
    with moto_server(tmp_path) as endpoint:  # moto runs from this interpreter, not the fresh venv
        client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
                              aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"])
        client.create_bucket(Bucket="corpus")
        for f in sorted(pq_dir.iterdir()):
            client.upload_file(str(f), "corpus", f"fineweb/{f.name}")
        s3_env = {**env, **KEYS, "AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
                  "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
                  "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
                  "AWS_EC2_METADATA_DISABLED": "true"}
        r = run_command(venv, s3_env, "ingest", "--tokenizer", deepseek(), "--input", "s3://corpus/fineweb/", "--to",
                        f"log:{tmp_path}/s3", "--partitions", "2", "--progress", "never")
        assert r.returncode == 0, r.stderr
    want = topic_content(venv, env, f"log:{tmp_path}/local")
    assert len(want) == 400
    assert topic_content(venv, env, f"log:{tmp_path}/s3") == want

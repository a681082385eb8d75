"""tokenfeed ingest of s3:// inputs against a real S3-compatible server on
127.0.0.1: moto in server mode (python/requirements-dev.txt), started here
and stopped at the end. The objects are uploaded with boto3; the ingest
reaches them through the standard AWS variables (fake keys, AWS_ENDPOINT_URL,
AWS_REGION). JSONL, gzip, zstd, text and FineWeb-style Parquet objects, a
prefix and a glob give the same records as the same files read locally;
missing buckets, keys and a dead endpoint are named; a run killed mid-object
and resumed gives exactly the records of an uninterrupted one."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import random
import socket
import subprocess
import sys
import time

import pytest

from cli_helpers import cli, deepseek, records, run, run_killed_until_done, write_jsonl
from conftest import missing
from table_helpers import fineweb_table, texts_for
from ports import free_port

try:  # a missing package fails the tests under TOKENFEED_REQUIRE_REFERENCE=1 (conftest.missing)
    import boto3
    import moto  # noqa: F401  (the server below runs it)
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # pragma: no cover
    boto3 = pa = pq = None

BUCKET = "corpus"
KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@contextlib.contextmanager
def moto_server(log_dir, **env):
    """moto's S3 server on 127.0.0.1 (a free port), stopped on leaving; its
    endpoint URL. `env`: moto's own settings."""
    port = free_port()
    # Its request log goes to a file: a pipe nobody reads would fill and stop it.
    log = open(log_dir / f"moto-{port}.log", "w+b")
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})
    try:
        deadline = time.monotonic() + 60
        while True:  # bounded: until it listens, it exits, or a minute passes
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"moto's server exited ({proc.returncode}): {log.read().decode()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("moto's server did not listen within 60 s")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    if boto3 is None or pq is None:
        missing("moto[server] or pyarrow is not installed (python/requirements-dev.txt)")
    with moto_server(tmp_path_factory.mktemp("moto")) as endpoint:
        yield endpoint


@pytest.fixture
def s3(s3_server, tmp_path, monkeypatch):
    """A fresh bucket, and the environment that points tokenfeed (and this
    process) at the server, isolated from any ~/.aws of the machine."""
    env = {**KEYS, "AWS_ENDPOINT_URL": s3_server, "AWS_REGION": "us-east-1",
           "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
           "AWS_EC2_METADATA_DISABLED": "true"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(k, raising=False)
    client = boto3.client("s3", endpoint_url=s3_server, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing")
    client.create_bucket(Bucket=BUCKET)
    # The program must reach S3 at all: a build without the Arrow plugin says so.
    client.put_object(Bucket=BUCKET, Key="probe/p.jsonl", Body=b'{"text": "probe"}\n')
    r = ingest(tmp_path, ["s3://corpus/probe/p.jsonl"], "probe", check=False)
    if "was not built in" in r.stderr:
        missing("the tokenfeed program was built without the Arrow plugin (TOKENFEED_WITH_PARQUET)")
    assert r.returncode == 0, r.stderr
    client.delete_object(Bucket=BUCKET, Key="probe/p.jsonl")
    yield client
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        for o in page.get("Contents", []):
            client.delete_object(Bucket=BUCKET, Key=o["Key"])
    client.delete_bucket(Bucket=BUCKET)


def upload(client, local_dir, prefix):
    for path in sorted(local_dir.rglob("*")):
        if path.is_file():
            client.upload_file(str(path), BUCKET, f"{prefix}/{path.relative_to(local_dir).as_posix()}")


def ingest(tmp, inputs, topic, *extra, check=True):
    return run("ingest", "--tokenizer", deepseek(), "--input", *inputs, "--to", f"log:{tmp}/{topic}",
               "--progress", "never", *extra, check=check)


def content(recs):
    """What a record says about its document, without where it was read from."""
    return [(r["partition"], r["doc_seq"], r["ids"]) for r in recs]


def write_zstd(path, data: bytes):
    with pa.CompressedOutputStream(str(path), "zstd") as out:
        out.write(data)


def mixed_corpus(d):
    """JSONL plain, gzip and zstd, and text, in one directory (hidden files skipped)."""
    texts = texts_for(900, seed=21, newlines=False)
    d.mkdir()
    write_jsonl(d / "a.jsonl", texts[:300])
    jsonl = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts[300:600])
    (d / "b.jsonl.gz").write_bytes(gzip.compress(jsonl.encode()))
    write_zstd(d / "c.jsonl.zst", "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n"
                                          for t in texts[600:800]).encode())
    (d / "sub").mkdir()
    (d / "sub" / "d.txt").write_text("\n\n".join(texts[800:]) + "\n", encoding="utf-8")
    (d / ".hidden.jsonl").write_text('{"text": "never read"}\n')
    return texts


def test_jsonl_text_and_compressed_objects_ingest_like_local_files(s3, tmp_path):
    d = tmp_path / "in"
    mixed_corpus(d)
    upload(s3, d, "mixed")
    ingest(tmp_path, [d], "local", "--partitions", "3")
    want = records(f"log:{tmp_path}/local")
    assert len(want) == 900  # the text file's paragraphs are its documents; the hidden file is skipped

    # The prefix, with and without its slash, reads like the directory.
    for name, spec in [("prefix", "s3://corpus/mixed/"), ("prefix_noslash", "s3://corpus/mixed")]:
        ingest(tmp_path, [spec], name, "--partitions", "3")
        got = records(f"log:{tmp_path}/{name}")
        assert content(got) == content(want), name
        local_paths = [r["source"]["path"] for r in want]
        assert [r["source"]["path"] for r in got] == \
            [p.replace(str(d), "s3://corpus/mixed") for p in local_paths], name
        assert [(r["source"]["line"], r["source"]["byte_offset"]) for r in got] == \
            [(r["source"]["line"], r["source"]["byte_offset"]) for r in want], name

    # A glob over keys, against the same glob over the files.
    ingest(tmp_path, [f"{d}/*.jsonl*"], "local_glob", "--partitions", "2")
    ingest(tmp_path, ["s3://corpus/mixed/*.jsonl*"], "s3_glob", "--partitions", "2")
    assert content(records(f"log:{tmp_path}/s3_glob")) == content(records(f"log:{tmp_path}/local_glob"))
    ingest(tmp_path, ["s3://corpus/**/*.txt"], "s3_deep_glob")
    assert {r["source"]["path"] for r in records(f"log:{tmp_path}/s3_deep_glob")} == \
        {"s3://corpus/mixed/sub/d.txt"}
    # An object whose key is the glob's listing prefix ("mixed" beside
    # "mixed/..."): the glob still lists below it.
    s3.put_object(Bucket=BUCKET, Key="mixed", Body=b'{"text": "an object named like the prefix"}\n')
    ingest(tmp_path, ["s3://corpus/mixed/*.jsonl*"], "s3_glob_beside_object", "--partitions", "2")
    assert content(records(f"log:{tmp_path}/s3_glob_beside_object")) == \
        content(records(f"log:{tmp_path}/local_glob"))
    s3.delete_object(Bucket=BUCKET, Key="mixed")

    # Objects and a local file together, and one object named twice, in one
    # run (without deduplication, which would drop the second copies).
    ingest(tmp_path, ["s3://corpus/mixed/a.jsonl", d / "a.jsonl", "s3://corpus/mixed/a.jsonl"], "both",
           "--no-dedup")
    both = records(f"log:{tmp_path}/both")
    assert len(both) == 600
    assert sorted({r["source"]["path"] for r in both}) == [str(d / "a.jsonl"), "s3://corpus/mixed/a.jsonl"]


def test_the_python_api_reads_s3_or_says_it_was_not_built_in(s3, tmp_path):
    import tokenfeed
    d = tmp_path / "in"
    mixed_corpus(d)
    upload(s3, d, "api")
    ingest(tmp_path, [d], "local", "--partitions", "2")
    try:
        stats = tokenfeed.ingest("s3://corpus/api/", to=f"log:{tmp_path}/api", tokenizer=deepseek(), partitions=2,
                                 progress="never")
    except tokenfeed.UnsupportedError as e:
        # The suite's wheel is built without the Arrow plugin (pyproject.toml).
        assert "'s3://corpus/api/': S3 input (s3://) was not built in" in str(e), e
        assert "TOKENFEED_WITH_PARQUET=ON" in str(e), e
        return
    assert stats["documents_written"] == len(records(f"log:{tmp_path}/local"))
    assert content(records(f"log:{tmp_path}/api")) == content(records(f"log:{tmp_path}/local"))


def test_fineweb_parquet_locally_and_from_s3_gives_the_records_of_the_same_jsonl(s3, tmp_path):
    texts = texts_for(3000, seed=22, newlines=False)
    pq_dir, js_dir = tmp_path / "in_pq", tmp_path / "in_js"
    pq_dir.mkdir()
    js_dir.mkdir()
    pq.write_table(fineweb_table(texts[:1700]), pq_dir / "a.parquet", compression="snappy", row_group_size=400)
    pq.write_table(fineweb_table(texts[1700:], 1700), pq_dir / "b.parquet", compression="zstd",
                   row_group_size=333)
    write_jsonl(js_dir / "a.jsonl", texts[:1700])
    write_jsonl(js_dir / "b.jsonl", texts[1700:])
    upload(s3, pq_dir, "fineweb")
    ingest(tmp_path, [js_dir], "js", "--partitions", "3")
    ingest(tmp_path, [pq_dir], "pq", "--partitions", "3")
    ingest(tmp_path, ["s3://corpus/fineweb/"], "s3", "--partitions", "3")
    from_jsonl, from_local, from_s3 = (records(f"log:{tmp_path}/{t}") for t in ("js", "pq", "s3"))
    assert len(from_s3) == len(texts)
    assert content(from_s3) == content(from_jsonl) == content(from_local)
    by_seq = {r["doc_seq"]: r for r in from_s3}
    assert by_seq[1700]["source"]["path"] == "s3://corpus/fineweb/b.parquet"
    assert by_seq[1700]["source"]["line"] == 1 and by_seq[1699]["source"]["byte_offset"] == 1699
    ingest(tmp_path, ["s3://corpus/fineweb/*.parquet"], "s3_glob", "--partitions", "3")
    assert content(records(f"log:{tmp_path}/s3_glob")) == content(from_jsonl)


def refused(tmp_path, inputs, *extra, timeout=120):
    started = time.monotonic()
    r = run("ingest", "--tokenizer", deepseek(), "--input", *inputs, "--to", f"log:{tmp_path}/bad",
            "--progress", "never", *extra, check=False, timeout=timeout)
    assert r.returncode not in (0, -11, -6), r.stderr  # an error, not a crash
    assert r.returncode != 0, r.stderr
    return r.stderr, time.monotonic() - started


def test_missing_bucket_key_and_endpoint_are_named(s3, tmp_path, monkeypatch):
    s3.put_object(Bucket=BUCKET, Key="there/a.jsonl", Body=b'{"text": "hello"}\n')
    err, _ = refused(tmp_path, ["s3://corpus/there/nothing.jsonl"])
    assert "input 's3://corpus/there/nothing.jsonl': no object or prefix at http://127.0.0.1:" in err, err
    err, _ = refused(tmp_path, ["s3://no-such-bucket/a.jsonl"])
    assert "'s3://no-such-bucket/a.jsonl': the bucket 'no-such-bucket' does not exist" in err, err
    err, _ = refused(tmp_path, ["s3://corpus/there/*.parquet"])
    assert "input pattern 's3://corpus/there/*.parquet' matches no object" in err, err
    err, _ = refused(tmp_path, ["s3://Bad_Bucket/a.jsonl"])
    assert "'s3://Bad_Bucket/a.jsonl' is not a usable S3 URI" in err, err
    # A binary object is refused by its first bytes, as a local file is.
    s3.put_object(Bucket=BUCKET, Key="there/image.jsonl", Body=b"\x89PNG\r\n\x1a\n" + bytes(200))
    err, _ = refused(tmp_path, ["s3://corpus/there/image.jsonl"])
    assert "'s3://corpus/there/image.jsonl': a PNG image" in err, err
    # A Parquet file under a JSONL name: its magic at the start and (a
    # second ranged read) at the end.
    sink = pa.BufferOutputStream()
    pq.write_table(fineweb_table(["a", "b"]), sink)
    s3.put_object(Bucket=BUCKET, Key="there/export.jsonl", Body=sink.getvalue().to_pybytes())
    err, _ = refused(tmp_path, ["s3://corpus/there/export.jsonl"])
    assert "'s3://corpus/there/export.jsonl': a Parquet file (PAR1 at the start and at the end" in err, err
    # A user name and password in the endpoint URL: refused, and not shown.
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://someone:hunter2@127.0.0.1:9")
    err, _ = refused(tmp_path, ["s3://corpus/there/a.jsonl"])
    assert "'s3://corpus/there/a.jsonl': the endpoint in AWS_ENDPOINT_URL holds a user name or password" in err, err
    assert "hunter2" not in err, err
    # Nothing listens there: bounded retries, then the endpoint is named.
    dead = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
    err, took = refused(tmp_path, ["s3://corpus/there/a.jsonl"])
    assert f"'s3://corpus/there/a.jsonl': looking it up at {dead} failed" in err, err
    assert "the endpoint did not answer after 5 attempts" in err, err
    assert took < 60, took


def test_an_endpoint_that_never_answers_fails_in_bounded_time(s3, tmp_path, monkeypatch):
    """A listener that accepts connections and sends nothing: each attempt is
    cut after 3 s without data, then retried with backoff, then named."""
    import threading
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.settimeout(0.2)
    held, stop = [], threading.Event()

    def accept():
        while not stop.is_set():  # bounded by the test: stop is set in finally
            try:
                held.append(listener.accept()[0])
            except OSError:
                pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        silent = f"http://127.0.0.1:{listener.getsockname()[1]}"
        monkeypatch.setenv("AWS_ENDPOINT_URL", silent)
        err, took = refused(tmp_path, ["s3://corpus/a.jsonl"])
        assert f"'s3://corpus/a.jsonl': looking it up at {silent} failed" in err, err
        assert "the endpoint did not answer after 5 attempts" in err, err
        assert len(held) == 5, len(held)
        assert took < 60, took
    finally:
        stop.set()
        thread.join(timeout=5)
        for c in held:
            c.close()
        listener.close()


def test_access_denied_is_named_and_not_retried(s3, tmp_path, monkeypatch):
    """A second server that checks keys after its first two requests (moto's
    INITIAL_NO_AUTH_ACTION_COUNT): the bucket and object are made, then the
    ingest's unknown key is refused."""
    with moto_server(tmp_path, INITIAL_NO_AUTH_ACTION_COUNT="2") as locked:
        client = boto3.client("s3", endpoint_url=locked, region_name="us-east-1", aws_access_key_id="a",
                              aws_secret_access_key="b")
        client.create_bucket(Bucket="locked")
        client.put_object(Bucket="locked", Key="a.jsonl", Body=b'{"text": "secret"}\n')
        monkeypatch.setenv("AWS_ENDPOINT_URL", locked)
        err, took = refused(tmp_path, ["s3://locked/a.jsonl"])
        assert f"'s3://locked/a.jsonl': looking it up at {locked} failed" in err, err
        assert "access denied: check the credentials" in err, err
        assert took < 30, took
        # Not retried: the server refused one request (its log has a line per
        # request; four retries would make five).
        port = locked.rsplit(":", 1)[1]
        refusals = [line for line in (tmp_path / f"moto-{port}.log").read_text(errors="replace").splitlines()
                    if line.rstrip().endswith('" 403 -')]
        assert len(refusals) == 1, refusals


# With deduplication (the default) a resumed run rereads from the start to
# rebuild the set of seen documents; without it, a plain object is entered by
# a ranged read at the resume offset, a compressed one is read up to it.
@pytest.mark.parametrize("dedup", [[], ["--no-dedup"]], ids=["dedup", "no-dedup"])
def test_killed_mid_object_and_resumed_gives_the_same_records(s3, tmp_path, dedup):
    d = tmp_path / "in"
    d.mkdir()
    texts = texts_for(60000, seed=23, newlines=False)
    # The plain object spans two 8 MiB ranged reads.
    write_jsonl(d / "big.jsonl", texts[:50000])
    pad = "".join(json.dumps({"text": t, "pad": "p" * 150}, ensure_ascii=False) + "\n" for t in texts[50000:52000])
    with open(d / "big.jsonl", "a", encoding="utf-8") as f:
        f.write(pad)
    assert (d / "big.jsonl").stat().st_size > 9 * 1024 * 1024
    jsonl = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts[52000:])
    (d / "small.jsonl.gz").write_bytes(gzip.compress(jsonl.encode()))
    upload(s3, d, "resume")
    common = ["--partitions", "3", "--batch-bytes", "16384", "--threads", "2", *dedup]
    ingest(tmp_path, ["s3://corpus/resume/"], "ref", *common)
    want = records(f"log:{tmp_path}/ref")
    assert len(want) == len(texts)
    uri = f"log:{tmp_path}/t"
    stats = tmp_path / "stats.json"
    args = [cli(), "ingest", "--tokenizer", deepseek(), "--input", "s3://corpus/resume/", "--to", uri,
            "--progress", "never", "--stats-json", str(stats), *common]
    rng = random.Random(9)
    kills = run_killed_until_done(args, uri, len(want), rng, kills=3, share=(0.1, 0.8))
    assert kills >= 2, "runs were hardly ever interrupted: the test proved too little"
    assert records(uri) == want
    last = json.loads(stats.read_text())
    assert last["resumed"]
    if "--no-dedup" in dedup:  # it started inside an object, not at the start
        assert last["resumed_from_sequence"] > 0, last
    # The same objects read locally give the same documents.
    ingest(tmp_path, [d], "local", *common)
    assert content(records(f"log:{tmp_path}/local")) == content(want)


def test_parquet_object_killed_mid_file_and_resumed_gives_the_same_records(s3, tmp_path):
    """Without deduplication a resumed run reopens the Parquet object through
    ranged reads and starts at the row group holding the resume row."""
    d = tmp_path / "in"
    d.mkdir()
    texts = texts_for(40000, seed=24, newlines=False)
    pq.write_table(fineweb_table(texts[:30000]), d / "big.parquet", compression="zstd", row_group_size=2500)
    pq.write_table(fineweb_table(texts[30000:], 30000), d / "small.parquet", compression="snappy",
                   row_group_size=1000)
    upload(s3, d, "pqresume")
    common = ["--partitions", "3", "--batch-bytes", "16384", "--threads", "2", "--no-dedup"]
    ingest(tmp_path, ["s3://corpus/pqresume/"], "ref", *common)
    want = records(f"log:{tmp_path}/ref")
    assert len(want) == len(texts)
    uri = f"log:{tmp_path}/t"
    stats = tmp_path / "stats.json"
    args = [cli(), "ingest", "--tokenizer", deepseek(), "--input", "s3://corpus/pqresume/", "--to", uri,
            "--progress", "never", "--stats-json", str(stats), *common]
    kills = run_killed_until_done(args, uri, len(want), random.Random(11), kills=3, share=(0.05, 0.7))
    assert kills >= 2, "runs were hardly ever interrupted: the test proved too little"
    assert records(uri) == want
    last = json.loads(stats.read_text())
    assert last["resumed"] and last["resumed_from_sequence"] > 0, last


def test_credentials_from_a_profile_file(tmp_path, monkeypatch):
    """No key variables: the keys are in a shared credentials file under a
    profile (AWS_PROFILE). The server checks them (moto's IAM
    authentication after INITIAL_NO_AUTH_ACTION_COUNT unchecked requests,
    which make the user, its key and policy, the bucket and the object): the
    profile's key reads, another profile is refused."""
    if boto3 is None:
        missing("moto[server] is not installed (python/requirements-dev.txt)")
    with moto_server(tmp_path, INITIAL_NO_AUTH_ACTION_COUNT="5") as locked:
        unchecked = dict(endpoint_url=locked, region_name="us-east-1", aws_access_key_id="a",
                         aws_secret_access_key="b")
        iam = boto3.client("iam", **unchecked)
        iam.create_user(UserName="feed")
        key = iam.create_access_key(UserName="feed")["AccessKey"]
        iam.put_user_policy(UserName="feed", PolicyName="read", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        client = boto3.client("s3", **unchecked)
        client.create_bucket(Bucket="profiled")
        client.put_object(Bucket="profiled", Key="a.jsonl", Body=b'{"text": "from a profile"}\n')

        creds = tmp_path / "credentials"
        creds.write_text(f"[feed]\naws_access_key_id = {key['AccessKeyId']}\n"
                         f"aws_secret_access_key = {key['SecretAccessKey']}\n"
                         "[other]\naws_access_key_id = AKIANOTAKEY\naws_secret_access_key = nope\n")
        for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3",
                  "AWS_DEFAULT_REGION"):
            monkeypatch.delenv(k, raising=False)
        for k, v in {"AWS_SHARED_CREDENTIALS_FILE": str(creds), "AWS_CONFIG_FILE": str(tmp_path / "no-config"),
                     "AWS_PROFILE": "feed", "AWS_ENDPOINT_URL": locked, "AWS_REGION": "us-east-1",
                     "AWS_EC2_METADATA_DISABLED": "true"}.items():
            monkeypatch.setenv(k, v)
        r = ingest(tmp_path, ["s3://profiled/a.jsonl"], "p", check=False)
        if "was not built in" in r.stderr:
            missing("the tokenfeed program was built without the Arrow plugin (TOKENFEED_WITH_PARQUET)")
        assert r.returncode == 0, r.stderr
        assert [rec["source"]["path"] for rec in records(f"log:{tmp_path}/p")] == ["s3://profiled/a.jsonl"]
        monkeypatch.setenv("AWS_PROFILE", "other")
        err, _ = refused(tmp_path, ["s3://profiled/a.jsonl"])
        assert "access denied: check the credentials" in err, err

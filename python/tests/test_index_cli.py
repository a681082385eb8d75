"""tokenfeed index on an embedded log topic (TOKENS); Kafka: test_kafka_token_index.py."""

from __future__ import annotations

import json
import pathlib

from cli_helpers import deepseek, records, run, write_jsonl


def partition_dir(topic: pathlib.Path, p: int) -> pathlib.Path:
    return topic / f"partition-{p:05d}"


def test_builds_the_index_of_an_older_topic_and_repairs_a_damaged_one(tmp_path):
    src = write_jsonl(tmp_path / "in.jsonl", [f"document {i} " + "word " * (i % 37) for i in range(300)])
    topic = tmp_path / "t"
    uri = f"log:{topic}"
    run("ingest", "--tokenizer", deepseek(), "--input", src, "--to", uri, "--partitions", "3", "--progress", "never")
    (partition_dir(topic, 0) / "TOKENS").unlink()  # written before the index existed
    damaged = partition_dir(topic, 1) / "TOKENS"
    damaged.write_bytes(b"garbage!" + damaged.read_bytes()[8:])

    r = run("index", uri)
    recs = records(uri)
    rows = {}
    for line in r.stdout.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[0].isdigit():
            rows[int(fields[0])] = [int(x) for x in fields[1:]]
    assert sorted(rows) == [0, 1, 2], r.stdout
    for p in range(3):
        mine = [x for x in recs if x["partition"] == p]
        assert rows[p] == [len(mine), len(mine), sum(x["num_ids"] for x in mine)], r.stdout
        assert (partition_dir(topic, p) / "TOKENS").stat().st_size == 16 + 8 * len(mine)
    notes = [line for line in r.stdout.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "partition 1" in notes[0] and "rebuilt" in notes[0], r.stdout

    again = run("index", uri)  # nothing left to repair
    assert "note:" not in again.stdout
    topics = json.loads(run("topics", uri, "--json").stdout)
    assert sum(row[0] for row in rows.values()) == topics["records"] == 300


def test_refuses_a_missing_topic(tmp_path):
    r = run("index", f"log:{tmp_path}/none", check=False)
    assert r.returncode == 1 and "does not exist" in r.stderr, r.stderr
    assert not (tmp_path / "none").exists()
    r = run("index", check=False)
    assert r.returncode == 2

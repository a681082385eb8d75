"""tokenfeed.TokenDataset: the PyTorch side of the loader."""

from __future__ import annotations

import json

import pytest
import torch
from torch.utils.data import DataLoader

import tokenfeed
from dataset_helpers import make_topic
from ports import free_port


@pytest.fixture(scope="module")
def topic(tmp_path_factory):
    return make_topic(tmp_path_factory.mktemp("ds"), "t")


def rows(ds, limit=None):
    out = []
    for i, b in enumerate(ds):
        if limit is not None and i >= limit:
            break
        out.extend(b["input_ids"].tolist())
    return out


def test_batches_are_tensors_of_the_right_shape(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=128, batch_size=4, seed=3)
    b = next(iter(ds))
    assert b["input_ids"].shape == (4, 128) and b["input_ids"].dtype == torch.int64
    assert b["labels"].shape == b["position_ids"].shape == b["document_ids"].shape == (4, 128)
    assert b["cu_seqlens"][0] == 0 and b["cu_seqlens"][-1] == 4 * 128
    # labels are the next token within a document, -100 at its end
    ids, labels, docs = b["input_ids"], b["labels"], b["document_ids"]
    same = docs[:, 1:] == docs[:, :-1]
    assert torch.equal(labels[:, :-1][same], ids[:, 1:][same])
    assert (labels[:, :-1][~same] == -100).all()
    small = tokenfeed.TokenDataset(topic, seq_len=128, batch_size=4, dtype=torch.int32)
    assert next(iter(small))["input_ids"].dtype == torch.int32


def test_dataloader_with_batch_size_none(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=3)
    direct = rows(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=3), 20)
    via = []
    for i, b in enumerate(DataLoader(ds, batch_size=None)):
        if i == 20:
            break
        via.extend(b["input_ids"].tolist())
    assert via == direct
    with pytest.raises(tokenfeed.IterationError, match="num_workers=0") as e:
        next(iter(DataLoader(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2), batch_size=None,
                             num_workers=1)))
    assert isinstance(e.value, tokenfeed.TokenfeedError) and isinstance(e.value, RuntimeError)


def test_state_dict_resumes_exactly(topic):
    full = rows(tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2))
    ds = tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2)
    it = iter(ds)
    head = []
    for _ in range(17):
        head.extend(next(it)["input_ids"].tolist())
    state = ds.state_dict()
    text = json.dumps(state)
    assert len(text) < 8192, "the state should be a few kilobytes"
    next(it)  # taken after the checkpoint: not in it
    again = tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2)
    again.load_state_dict(json.loads(text))
    assert head + rows(again) == full


def test_elastic_resume_with_two_ranks_then_one(topic):
    whole = rows(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=4, seed=2, epochs=1))
    r0 = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=2, rank=0, world_size=2)
    r1 = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=2, rank=1, world_size=2)
    got = []
    for _, b0, b1 in zip(range(9), r0, r1):  # range first: zip stops before taking a 10th batch
        got.extend(b0["input_ids"].tolist() + b1["input_ids"].tolist())
    assert r0.state_dict() == r1.state_dict()
    one = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=4, seed=2)
    one.load_state_dict(r0.state_dict())
    assert got + rows(one) == whole


def test_mixing_weights(tmp_path):
    a = make_topic(tmp_path, "a", docs=1500, seed=1)
    b = make_topic(tmp_path, "b", docs=1500, seed=2)
    ds = tokenfeed.TokenDataset({a: 3.0, b: 1.0}, seq_len=32, batch_size=8, epochs=0)
    counts = torch.zeros(2)
    for i, batch in enumerate(ds):
        counts += torch.bincount(batch["source"].long(), minlength=2)
        if i == 99:
            break
    assert abs(counts[0].item() - 600) <= 1 and abs(counts[1].item() - 200) <= 1


def test_errors_are_python_exceptions(topic, tmp_path):
    with pytest.raises(ValueError, match="seq_len"):
        tokenfeed.TokenDataset(topic, seq_len=0, batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=-1)
    with pytest.raises(FileNotFoundError):
        tokenfeed.TokenDataset(f"log:{tmp_path}/nothing", seq_len=8, batch_size=2)
    with pytest.raises(ValueError, match="topic URI"):
        tokenfeed.TokenDataset("http://example/x", seq_len=8, batch_size=2)
    ds = tokenfeed.TokenDataset(topic, seq_len=32, batch_size=2)
    state = ds.state_dict()
    other = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2)
    with pytest.raises(ValueError, match="other sources or settings"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="not a TokenDataset"):
        other.load_state_dict({"something": 1})


def test_block_records_defaults_to_1024_on_the_log(topic):
    """Left unset, the log's blocks are 1024 records: the same stream and state as asking for 1024."""
    opts = dict(seq_len=64, batch_size=4, seed=9, epochs=1)
    default = tokenfeed.TokenDataset(topic, **opts)
    assert rows(default, 30) == rows(tokenfeed.TokenDataset(topic, block_records=1024, **opts), 30)
    assert rows(tokenfeed.TokenDataset(topic, block_records=None, **opts), 30) == rows(
        tokenfeed.TokenDataset(topic, block_records=1024, **opts), 30)
    state = tokenfeed.TokenDataset(topic, **opts).state_dict()
    tokenfeed.TokenDataset(topic, block_records=1024, **opts).load_state_dict(state)
    with pytest.raises(ValueError, match="other sources or settings"):
        tokenfeed.TokenDataset(topic, block_records=4096, **opts).load_state_dict(state)


def test_metrics_report_waiting_and_fill(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2)
    for _ in zip(range(5), ds):
        pass
    m = ds.metrics()
    assert m["batches"] == 5 and m["ready_capacity"] == 4
    assert m["wait_seconds_total"] >= 0 and m["partition_lag"]


def test_each_new_iteration_after_the_end_is_the_next_round(topic):
    """for epoch in range(3): for b in ds: trains three rounds, each reshuffled."""
    ds = tokenfeed.TokenDataset(topic, seq_len=256, batch_size=8, seed=4, pack=False)
    rounds = [[tuple(r) for b in ds for r in b["input_ids"].tolist()] for _ in range(3)]
    assert all(len(r) == len(rounds[0]) > 0 for r in rounds)
    assert rounds[0] != rounds[1] != rounds[2]
    assert sorted(rounds[0]) == sorted(rounds[1]) == sorted(rounds[2])  # the same documents each round
    # An interrupted iteration continues where it stopped.
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=4)
    whole = rows(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=4))
    head = [r for _, b in zip(range(5), ds) for r in b["input_ids"].tolist()]
    assert head + rows(ds) == whole
    # Two iterators of one dataset would share one stream: the older one says so.
    first = iter(ds)
    second = iter(ds)
    next(second)
    with pytest.raises(tokenfeed.IterationError, match="newer iterator") as e:
        next(first)
    assert isinstance(e.value, tokenfeed.TokenfeedError) and isinstance(e.value, RuntimeError)


def test_a_state_taken_in_the_second_round_resumes_there(topic):
    opts = dict(seq_len=128, batch_size=4, seed=6)
    ds = tokenfeed.TokenDataset(topic, **opts)
    rows(ds)
    it = iter(ds)
    for _ in range(7):
        next(it)
    state = ds.state_dict()
    rest = [b["input_ids"].tolist() for b in it]
    again = tokenfeed.TokenDataset(topic, **opts)
    again.load_state_dict(state)
    assert [b["input_ids"].tolist() for b in again] == rest


def test_an_empty_source_is_refused_naming_it(topic, tmp_path):
    empty = make_topic(tmp_path, "empty", docs=0, partitions=2)
    for epochs in (0, 1):
        with pytest.raises(ValueError, match=f"source {empty} is empty"):
            tokenfeed.TokenDataset({topic: 0.5, empty: 0.5}, seq_len=32, batch_size=2, epochs=epochs)


def test_mixed_epochs_show_every_document_of_every_source(tmp_path):
    """{A: 0.5, B: 0.5} of different sizes, epochs=1: all of A is seen; B is read again meanwhile."""
    a = make_topic(tmp_path, "a", docs=1200, seed=1)
    b = make_topic(tmp_path, "b", docs=200, seed=2)
    ds = tokenfeed.TokenDataset({a: 0.5, b: 0.5}, seq_len=4096, batch_size=4, pack=False, shuffle=False,
                                eos_id=None)
    per_source = [0, 0]
    for batch in ds:
        for s in batch["source"].tolist():
            per_source[s] += 1
    assert per_source[0] >= 1200 - 4, "every document of the larger source (one per row) but the last step's"
    assert abs(per_source[0] - per_source[1]) <= 1, "the weights hold to the end"
    m = ds.metrics()
    assert m["ended_source"] == a
    assert m["epochs_completed"][1] >= 5


def test_int32_ids_keep_int64_labels_for_cross_entropy(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=32, batch_size=2, dtype=torch.int32)
    b = next(iter(ds))
    assert b["input_ids"].dtype == torch.int32 and b["labels"].dtype == torch.int64
    logits = torch.zeros(2 * 32, 130000)
    torch.nn.functional.cross_entropy(logits, b["labels"].reshape(-1), ignore_index=-100)


@pytest.mark.parametrize("name,value", [
    ("rank", -1), ("world_size", -1), ("block_records", -5), ("pad_id", -5), ("bos_id", 2**33),
    ("seq_len", 2**40), ("batch_size", 0), ("memory_budget_bytes", 0), ("prefetch_batches", -1),
    ("window_blocks", 0), ("kafka_timeout_ms", 0), ("seed", -1),
])
def test_out_of_range_options_are_value_errors_naming_them(topic, name, value):
    kwargs = dict(seq_len=16, batch_size=2)
    kwargs[name] = value
    if name == "rank":
        kwargs["world_size"] = 1
    with pytest.raises(tokenfeed.InvalidArgumentError, match=name) as e:
        tokenfeed.TokenDataset(topic, **kwargs)
    assert isinstance(e.value, ValueError) and "_create_loader" not in str(e.value)


@pytest.mark.parametrize("name,value,limits", [
    ("seq_len", 2**40, "between 1 and 16777216"), ("seq_len", -1, "between 1 and 16777216"),
    ("seq_len", 0, "between 1 and 16777216"), ("batch_size", 2**70, "between 1 and 65536"),
    ("kafka_timeout_ms", 2**33, "between 1 and 86400000"), ("world_size", 2**32, "between 1 and 1048576"),
    ("epochs", 2**32, "between 0 and 4294967295"),
])
def test_a_value_too_wide_for_its_field_names_the_real_range(topic, name, value, limits):
    """One check, one wording: a value beyond the field's integer type gets the loader's own range."""
    kwargs = dict(seq_len=16, batch_size=2)
    kwargs[name] = value
    with pytest.raises(tokenfeed.InvalidArgumentError) as e:
        tokenfeed.TokenDataset(topic, **kwargs)
    assert str(e.value) == f"{name} must be {limits}, not {value}"


def test_numpy_integers_are_accepted_and_bools_refused(topic):
    np = pytest.importorskip("numpy")
    ds = tokenfeed.TokenDataset(topic, seq_len=np.int64(128), batch_size=np.int32(2), epochs=np.uint8(1))
    assert next(iter(ds))["input_ids"].shape == (2, 128)
    with pytest.raises(TypeError, match="seq_len must be an integer, not bool"):
        tokenfeed.TokenDataset(topic, seq_len=True, batch_size=2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'sequence_length'"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, sequence_length=8)


def test_state_with_weights_as_proportions_and_the_differing_setting_named(tmp_path):
    a = make_topic(tmp_path, "a", docs=300, seed=1)
    b = make_topic(tmp_path, "b", docs=300, seed=2)
    ds = tokenfeed.TokenDataset({a: 0.7, b: 0.3}, seq_len=32, batch_size=2)
    rows(ds, 3)
    state = ds.state_dict()
    tokenfeed.TokenDataset({a: 7, b: 3}, seq_len=32, batch_size=2).load_state_dict(state)
    for setting, message in [(dict(epochs=2), "epochs is 1 in the state, 2 here"),
                             (dict(pad_id=3), "pad_id is 0 in the state, 3 here"),
                             (dict(cross_document_labels=True), "cross_document_labels is 0 in the state, 1 here")]:
        with pytest.raises(ValueError, match=message):
            tokenfeed.TokenDataset({a: 0.7, b: 0.3}, seq_len=32, batch_size=2, **setting).load_state_dict(state)


def test_unpacked_padding_is_a_piece_in_every_key(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=512, batch_size=4, pack=False)
    b = next(iter(ds))
    mask = b["attention_mask"].bool()
    assert (~mask).any(), "some rows are padded"
    assert torch.equal(b["document_ids"], (~mask).to(torch.int32))
    bounds = [0]
    for r in range(4):
        short = int(mask[r].sum())
        assert torch.equal(b["position_ids"][r, :short], torch.arange(short))
        assert torch.equal(b["position_ids"][r, short:], torch.arange(512 - short))
        if short < 512:
            bounds.append(r * 512 + short)
        bounds.append((r + 1) * 512)
    assert b["cu_seqlens"].tolist() == bounds
    assert b["tokens"] == int(mask.sum()) and b["step"] == 0


def test_errors_are_one_family_with_clear_messages(topic, tmp_path):
    with pytest.raises(tokenfeed.NotFoundError) as e:
        tokenfeed.TokenDataset(f"log:{tmp_path}/nothing", seq_len=8, batch_size=2)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, tokenfeed.TokenfeedError)
    path = topic[len("log:"):]
    import pathlib
    for bad in (pathlib.Path(path), path.encode()):
        with pytest.raises(TypeError, match="log:"):
            tokenfeed.TokenDataset(bad, seq_len=8, batch_size=2)
    with pytest.raises(TypeError, match="kafka_properties must be a list of strings, not one str"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties="a=b")
    with pytest.raises(ValueError, match="key=value"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties=["oops"])
    ds = tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties={"client.id": "x"})
    with pytest.raises(TypeError, match="json.loads"):
        ds.load_state_dict(json.dumps(ds.state_dict()))


def test_kafka_properties_take_any_mapping_of_str_bool_and_int(topic):
    """A Mapping that is not a dict is read as one; str, bool and int values are converted; any other value
    is refused naming its key, never showing the value (it may be a password)."""
    import types
    from collections.abc import Mapping

    class Settings(Mapping):
        def __init__(self, d):
            self._d = d

        def __getitem__(self, k):
            return self._d[k]

        def __iter__(self):
            return iter(self._d)

        def __len__(self):
            return len(self._d)

    good = {"client.id": "x", "api.version.request": True, "socket.timeout.ms": 1000}
    for props in (good, types.MappingProxyType(good), Settings(good)):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties=props)
    for value in (b"hunter2-secret", 1.5, None, ["hunter2-secret"]):
        with pytest.raises(TypeError, match=r"kafka_properties\['sasl.password'\] must be a str, bool or int") as e:
            tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2,
                                   kafka_properties=Settings({"client.id": "x", "sasl.password": value}))
        assert "hunter2" not in str(e.value) and "1.5" not in str(e.value)
    with pytest.raises(TypeError, match="keys must be str"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties={1: "x"})
    with pytest.raises(tokenfeed.InvalidArgumentError, match="'a=b' is not a Kafka property name"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=2, kafka_properties={"a=b": "c"})
    # The converted values reach the Kafka client, which accepts them: the failure is the unreachable broker,
    # not a refused property; a name the client does not know is refused, named.
    port = free_port()  # nothing listens there
    uri = f"kafka://127.0.0.1:{port}/t"
    with pytest.raises(tokenfeed.TokenfeedError) as e:
        tokenfeed.TokenDataset(uri, seq_len=8, batch_size=2, kafka_timeout_ms=1000,
                               kafka_properties=types.MappingProxyType(good))
    assert not isinstance(e.value, tokenfeed.InvalidArgumentError), e.value
    with pytest.raises(tokenfeed.InvalidArgumentError, match="no.such.property"):
        tokenfeed.TokenDataset(uri, seq_len=8, batch_size=2, kafka_timeout_ms=1000,
                               kafka_properties=Settings({"no.such.property": True}))


def test_kafka_timeout_is_a_parameter():
    """An unreachable broker fails within kafka_timeout_ms, not the fixed 30 s."""
    import time
    port = free_port()  # nothing listens there
    t0 = time.monotonic()
    with pytest.raises(tokenfeed.TokenfeedError):
        tokenfeed.TokenDataset(f"kafka://127.0.0.1:{port}/t", seq_len=8, batch_size=2, kafka_timeout_ms=1500)
    assert time.monotonic() - t0 < 15


def test_kafka_client_log_lines_go_to_logging_not_raw_stderr(caplog, capfd):
    """librdkafka's own lines (a refused connection) reach logging's tokenfeed.kafka logger."""
    import logging
    port = free_port()  # nothing listens there
    with caplog.at_level(logging.DEBUG, logger="tokenfeed.kafka"):
        with pytest.raises(tokenfeed.TokenfeedError):
            tokenfeed.TokenDataset(f"kafka://127.0.0.1:{port}/t", seq_len=8, batch_size=2, kafka_timeout_ms=1500)
    ours = [r for r in caplog.records if r.name == "tokenfeed.kafka"]
    assert any(r.levelno >= logging.WARNING and f"127.0.0.1:{port}" in r.getMessage() for r in ours), \
        [r.getMessage() for r in ours]
    assert all(r.getMessage().startswith("[") for r in ours)
    err = capfd.readouterr().err
    assert "|FAIL|" not in err and "%3|" not in err, err


def test_help_documents_every_parameter_and_metrics_are_numbers(topic):
    import inspect
    sig = inspect.signature(tokenfeed.TokenDataset.__init__)
    doc = tokenfeed.TokenDataset.__doc__
    for name in list(sig.parameters)[1:]:
        assert f"``{name}``" in doc, f"{name} is not documented"
    assert sig.parameters["window_blocks"].default == 8 and sig.parameters["epochs"].default == 1
    for name in ["encode", "encode_numpy", "encode_batch", "encode_batch_numpy", "decode", "token_to_id",
                 "id_to_token", "is_special", "from_file", "from_str", "describe"]:
        doc = getattr(tokenfeed.Tokenizer, name).__doc__ or ""
        # nanobind writes the signature itself: the description comes after it.
        assert len(doc.split("\n", 1)[-1].strip()) > 30, f"Tokenizer.{name} is not documented"
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2)
    rows(ds, 3)
    lag = ds.metrics()["partition_lag"]
    assert [p["partition"] for p in lag] == [0, 1, 2]
    assert all(p["uri"] == topic and isinstance(p["records_behind"], int) for p in lag)
    assert ds.metrics()["ended_source"] is None


def test_the_version_has_one_home():
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[2]
    cmake = re.search(r"project\(tokenfeed\s+VERSION\s+([0-9.]+)", (root / "CMakeLists.txt").read_text()).group(1)
    assert tokenfeed.__version__ == cmake
    assert not re.search(r"^version\s*=", (root / "pyproject.toml").read_text(), re.M)
    assert "__version__ =" not in (root / "python" / "tokenfeed" / "__init__.py").read_text()


def test_bos_or_eos_added_at_ingest_and_again_here_is_refused(topic):
    """The topic was ingested with --add-eos: its records carry the 'ends' attribute."""
    with pytest.raises(tokenfeed.InvalidArgumentError, match="already carry the document-end"):
        tokenfeed.TokenDataset(topic, seq_len=128, batch_size=2, eos_id=1)
    # What the records lack may still be added here.
    ds = tokenfeed.TokenDataset(topic, seq_len=128, batch_size=2, bos_id=0)
    first = next(iter(ds))
    assert first["input_ids"].shape == (2, 128)

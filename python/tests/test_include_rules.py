"""The include graph: include/tokenfeed/ is the API and nothing internal, and
each component reaches only the components its layer allows.

Read from the source files as text, so a new dependency between components
fails here until it is added to ALLOWED on purpose (and src/README.md says
why). Test files (*_test.cc and the test helpers) may reach anything.
"""

from __future__ import annotations

import re

from conftest import ROOT

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# component -> the other components (src/<name>/) its code may include.
# Everything may include the public API (tokenfeed/...). Only topic/ knows
# the transports, and serve/ (a Kafka application) talks to Kafka itself.
# metrics/ (the Prometheus endpoint) is shared by serve/ and loader/.
ALLOWED = {
    "base": set(),
    "metrics": {"base"},
    "tokenizer": {"base"},
    "document": {"base"},
    "text": {"base"},
    "record": {"base"},
    "log": {"base"},
    "kafka": {"base"},
    "topic": {"base", "log", "kafka"},
    "ingest": {"base", "document", "text"},
    "loader": {"base", "metrics"},
    "serve": {"base", "document", "text", "kafka", "metrics"},
    "cli": {"base", "document", "ingest", "serve", "text"},
}


def is_test_file(name: str) -> bool:
    return name.endswith("_test.cc") or name.startswith("test_") or "testing" in name


def includes(path):
    return INCLUDE.findall(path.read_text(encoding="utf-8", errors="replace"))


def test_the_public_headers_include_only_the_public_api():
    headers = sorted((ROOT / "include" / "tokenfeed").glob("*.h"))
    assert headers, "no public headers found"
    bad = [(h.name, inc) for h in headers for inc in includes(h) if not inc.startswith("tokenfeed/")]
    assert not bad, f"public headers include internal ones: {bad}"


def test_each_component_includes_only_what_its_layer_allows():
    src = ROOT / "src"
    components = sorted(p.name for p in src.iterdir() if p.is_dir())
    assert set(components) == set(ALLOWED), "a component was added or removed: update ALLOWED and src/README.md"
    bad = []
    for c in components:
        for f in sorted((src / c).rglob("*")):
            if f.suffix not in (".h", ".cc") or is_test_file(f.name):
                continue
            for inc in includes(f):
                other = inc.split("/", 1)[0]
                if "/" in inc and other not in ("tokenfeed", c) and other not in ALLOWED[c]:
                    bad.append(f"{f.relative_to(ROOT)} includes {inc}")
    assert not bad, "\n".join(bad)


def test_the_python_binding_uses_the_public_api_alone():
    bad = [f"{f.name}: {inc}" for f in sorted((ROOT / "python" / "src").glob("*.cc"))
           for inc in includes(f) if "/" in inc and not inc.startswith("tokenfeed/")]
    assert not bad, bad


def test_the_rule_finds_a_forbidden_include(tmp_path):
    # The check itself can fail: a loader file reaching into the log.
    f = tmp_path / "x.cc"
    f.write_text('#include "log/log.h"\n#include "tokenfeed/topic.h"\n')
    assert [i.split("/", 1)[0] for i in includes(f)] == ["log", "tokenfeed"]
    assert "log" not in ALLOWED["loader"]

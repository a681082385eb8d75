#!/usr/bin/env bash
# CTest fixture for the Kafka tests: `start DIR NODES` runs a fresh private
# broker (or cluster) with scripts/kafka-local and leaves DIR/bootstrap for
# the tests; `stop DIR` stops it and removes DIR. When no broker can be had
# (no Java, no Maven, no network for the one-time fetch) start fails if
# TOKENFEED_REQUIRE_REFERENCE=1, and otherwise succeeds without a bootstrap
# file, so that the tests skip with a message instead of passing.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
action="$1"
dir="$2"
nodes="${3:-1}"
kl=("$root/scripts/kafka-local" --dir "$dir")

case "$action" in
  start)
    "${kl[@]}" clean >/dev/null 2>&1 || rm -rf "$dir"
    if "${kl[@]}" start --nodes "$nodes"; then
      exit 0
    fi
    rm -f "$dir/bootstrap"
    if [ "${TOKENFEED_REQUIRE_REFERENCE:-0}" = "1" ]; then
      echo "broker_fixture: could not start the Kafka broker and TOKENFEED_REQUIRE_REFERENCE=1" >&2
      exit 1
    fi
    echo "broker_fixture: no Kafka broker; the Kafka tests will skip (set TOKENFEED_REQUIRE_REFERENCE=1 to fail)" >&2
    exit 0
    ;;
  stop)
    "${kl[@]}" clean
    ;;
  *)
    echo "usage: broker_fixture.sh start DIR NODES | stop DIR" >&2
    exit 2
    ;;
esac

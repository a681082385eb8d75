#!/usr/bin/env python3
"""Reads a whole topic with confluent-kafka, as a Python training reader would.

--decode json: the baseline's consumer: json.loads each value and builds the
input_ids list (the article then makes tensors of it); --decode none: only
touches the bytes (what kcat does). Explicit partitions from the beginning,
no group commits, read to the end. Prints one line:
`python-consumer records=N bytes=B tokens=T wall_s=W cpu_s=C rx_bytes=R`
where rx_bytes is what librdkafka's statistics count as received from the
brokers (bytes on the wire, after compression).

  python_consumer.py --bootstrap B --topic T [--decode none|json]
"""

import argparse
import json
import resource
import time


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--decode", choices=["none", "json"], default="none")
    a = ap.parse_args()
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING

    stats = {}

    def on_stats(text):
        s = json.loads(text)
        stats["rx"] = sum(b.get("rxbytes", 0) for b in s.get("brokers", {}).values())

    started, cpu0 = time.monotonic(), cpu_seconds()
    c = Consumer({"bootstrap.servers": a.bootstrap, "group.id": "bench-python-consumer",
                  "enable.auto.commit": False, "enable.partition.eof": True,
                  "statistics.interval.ms": 100, "stats_cb": on_stats,
                  # The same fetch sizes as tokenfeed's consumers.
                  "fetch.max.bytes": 67108864, "max.partition.fetch.bytes": 4194304,
                  "receive.message.max.bytes": 68157440, "queued.max.messages.kbytes": 262144})
    md = c.list_topics(a.topic, timeout=10).topics[a.topic]
    parts = sorted(md.partitions)
    c.assign([TopicPartition(a.topic, p, OFFSET_BEGINNING) for p in parts])
    at_end = set()
    records = value_bytes = tokens = 0
    while len(at_end) < len(parts):
        for m in c.consume(num_messages=10000, timeout=0.1):
            if m.error():
                if m.error().code() == -191:  # _PARTITION_EOF
                    at_end.add(m.partition())
                    continue
                raise SystemExit(f"python_consumer: {m.error()}")
            v = m.value()
            records += 1
            value_bytes += len(v)
            if a.decode == "json":
                tokens += len(json.loads(v)["input_ids"])
    wall, cpu = time.monotonic() - started, cpu_seconds() - cpu0
    time.sleep(0.25)
    c.poll(0.2)  # one more statistics report
    c.close()
    print(f"python-consumer records={records} bytes={value_bytes} tokens={tokens} wall_s={wall:.3f} "
          f"cpu_s={cpu:.3f} rx_bytes={stats.get('rx', 0)}")


if __name__ == "__main__":
    main()

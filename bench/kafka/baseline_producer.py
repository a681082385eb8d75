#!/usr/bin/env python3
"""The baseline's producer, as its article writes it, for side-by-side numbers.

transformers' AutoTokenizer (loaded offline from a directory holding
tokenizer.json) encodes each document, and confluent-kafka produces one JSON
value per document, {"input_ids": [...], "attention_mask": [...]}, to the
topic. Unlike the article it does not truncate to 2048 tokens (--truncate N
restores that), so both sides produce the same tokens. Prints one line:
`baseline-producer documents=N tokens=T bytes=B wall_s=W cpu_s=C` (CPU: this
process, librdkafka's threads included).

  baseline_producer.py --bootstrap B --topic T --tokenizer-dir DIR [--compression C]
                   [--partitions N] [--max-message-bytes M] FILE.jsonl...
"""

import argparse
import json
import resource
import sys
import time


def cpu_seconds():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bootstrap", required=True)
    ap.add_argument("--topic", required=True)
    ap.add_argument("--tokenizer-dir", required=True)
    ap.add_argument("--compression", default="none", help="compression.type (the article sets none)")
    ap.add_argument("--truncate", type=int, default=0, help="max_length, as the article's truncation=True")
    ap.add_argument("--field", default="text")
    ap.add_argument("--partitions", type=int, default=0, help="create the topic with this many partitions")
    ap.add_argument("--max-message-bytes", type=int, default=1000000)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()

    from confluent_kafka import Producer
    from transformers import AutoTokenizer

    if a.partitions:
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": a.bootstrap})
        config = {"max.message.bytes": str(a.max_message_bytes + 1024)}
        admin.create_topics([NewTopic(a.topic, a.partitions, 1, config=config)])[a.topic].result(timeout=30)
        time.sleep(1)  # let the leaders settle before timing starts

    started, cpu0 = time.monotonic(), cpu_seconds()
    tokenizer = AutoTokenizer.from_pretrained(a.tokenizer_dir)
    producer = Producer({"bootstrap.servers": a.bootstrap, "compression.type": a.compression,
                         "message.max.bytes": a.max_message_bytes + 1024})
    failed = []

    def delivery_report(err, msg):
        if err:
            failed.append(err)

    documents = tokens = value_bytes = 0
    for path in a.files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                text = json.loads(line)[a.field].strip()
                if a.truncate:
                    ids = tokenizer.encode(text, truncation=True, max_length=a.truncate)
                else:
                    ids = tokenizer.encode(text)
                value = json.dumps({"input_ids": ids, "attention_mask": [1] * len(ids)})
                while True:
                    try:
                        producer.produce(a.topic, key=None, value=value, callback=delivery_report)
                        break
                    except BufferError:
                        producer.poll(0.1)
                producer.poll(0)
                documents += 1
                tokens += len(ids)
                value_bytes += len(value)
    producer.flush()
    if failed:
        sys.exit(f"baseline_producer: {len(failed)} records failed, first: {failed[0]}")
    print(f"baseline-producer documents={documents} tokens={tokens} bytes={value_bytes} "
          f"wall_s={time.monotonic() - started:.3f} cpu_s={cpu_seconds() - cpu0:.3f}")


if __name__ == "__main__":
    main()

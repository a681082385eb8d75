#!/usr/bin/env python3
"""Writes the golden token-record files of this directory.

This is a second, independent writer of the byte grammar in
docs/record_format.md (Python's struct module, not the C++ encoder), so the
golden test checks the C++ encoder and parser against the document. The files
are committed; run this only to add a case, never to "fix" a failing test:
version-1 files must keep decoding forever.

    python3 tests/record/testdata/make_golden.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
FLAG_IDS32 = 0x01


def record_v1(path, line, byte_offset, doc_seq, attributes, ids, width=None):
    if width is None:
        width = 4 if any(i > 0xFFFF for i in ids) else 2
    path_b = path.encode("utf-8")
    attrs = b""
    for key, value in attributes:
        attrs += struct.pack("<B", len(key)) + key + struct.pack("<H", len(value)) + value
    flags = FLAG_IDS32 if width == 4 else 0
    header = struct.pack("<BBHIQQQHH", 1, flags, len(path_b), len(ids), doc_seq, line, byte_offset, len(attrs), 0)
    assert len(header) == 36
    body = header + path_b + attrs
    body += b"\0" * ((4 - len(body) % 4) % 4)
    body += struct.pack("<%d%s" % (len(ids), "I" if width == 4 else "H"), *ids)
    return body


CASES = {
    # u16 ids, no attributes, three padding bytes before the ids.
    "v1_u16_plain.bin": record_v1("docs/wiki-en-0003.txt", 17, 123456, 42, [], [0, 1, 2, 50256, 65535]),
    # u32 ids (one id above 65535) and two attributes.
    "v1_u32_attributes.bin": record_v1(
        "/data/c4/c4-train.00007-of-01024.json.gz", 1, 0, 0,
        [(b"src", b"c4"), (b"lang", b"en")], [100000, 7, 65536, 4294967295]),
    # No ids, an empty path, and values that need all 64 bits.
    "v1_empty_ids.bin": record_v1("", (1 << 40) + 3, (1 << 63) + 5, (1 << 64) - 1, [], []),
    # A hypothetical version 2: the same header with the version byte 2. This
    # build must reject it as Unsupported, naming the version.
    "v2_future.bin": bytes([2]) + record_v1("x", 1, 2, 3, [], [4, 5])[1:],
}


def main():
    for name, data in CASES.items():
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        print(name, len(data), "bytes")


if __name__ == "__main__":
    main()

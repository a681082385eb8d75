#!/usr/bin/env python3
"""Writes split_golden.jsonl: the match spans that the reference tokenizer (HF
tokenizers, a Split pre-tokenizer with a Regex pattern) reports for each fast
scanner's pattern on a set of texts. split_golden_test.cc checks both the fast
scanners and the Oniguruma path against it.

Texts: the lines of pretokenizer_sample.txt, edge cases, and seeded random
strings over characters where the patterns have edges plus random code points
of all planes. With --corpus DIR, the texts are instead the "text" fields of
DIR/*.jsonl (for a one-off check; write it outside the repository with --out).

Format: line 1 {"tokenizers": version, "patterns": [...]}; then one line per
text {"text": ..., "spans": [[[begin, end], ...] for each pattern]}, byte
offsets into the UTF-8 text.

Usage: .venv/bin/python src/tokenizer/testdata/make_split_golden.py [--corpus DIR --out FILE]
"""
import argparse
import glob
import json
import os
import random

import tokenizers
from tokenizers import Regex
from tokenizers import pre_tokenizers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))

BYTE_LEVEL = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
CL100K = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"
          r"|\s*[\r\n]|\s+(?!\S)|\s+")


def tokenizer_json_patterns(name):
    """The Split regexes of .cache/tokenizers/NAME/tokenizer.json, in order."""
    path = os.path.join(ROOT, ".cache", "tokenizers", name, "tokenizer.json")
    with open(path, encoding="utf-8") as f:
        pre = json.load(f)["pre_tokenizer"]
    stages = pre["pretokenizers"] if pre["type"] == "Sequence" else [pre]
    return [s["pattern"]["Regex"] for s in stages if s["type"] == "Split"]


def patterns():
    deepseek = tokenizer_json_patterns("deepseek_v3")
    llama = tokenizer_json_patterns("llama3")
    qwen = tokenizer_json_patterns("qwen3")
    assert len(deepseek) == 3 and len(llama) == 1 and len(qwen) == 1
    return [BYTE_LEVEL, llama[0], qwen[0], CL100K] + deepseek


EDGE_CASES = [
    "", "a   b", "a  ", "   ", "x \u3000y", "a\u0085b", "a\u2028b", "a\u00a0b", "\u00a0\u00a0x", "a\r\n\r\nb",
    "a \n \n b", "\r\r\n\n", "x\n  \n\ty", "a \r\n  ", "!!\n\n x", " !!\r\n", "1234567", "a1234b",
    "\u0661\u0662\u0663\u0664", "\u2160\u2161\u2162\u2163", "\U0001D7CE\U0001D7CF\U0001D7D0\U0001D7D1",
    "it's IT'S they're THEY'RE we've I'm you'll he'd o'\u017f '\u212a 'lL 'rE ''s ' s", "don't rock'n'roll",
    " .com .com x.com ~ ~~ ~x", "\u00bfQu\u00e9? \u00abg\u00bb \u201cq\u201d", "\tword\nword\rword \u0085word",
    "cafe\u0301 e\u0301\u0301 \u0301a \u0915\u094d\u0937", "\u4e00\u9fa5\u9fa6\u4dff\u3040\u309f\u30a0\u30ff\u3100",
    "\u4eba\u3005 \u3001\u3002 \uff01 \ud55c\uad6d\uc5b4 \u4e2d1\u6587",
    "\U0001F468\u200d\U0001F469\u200d\U0001F467 \u2764\ufe0f 1\ufe0f\u20e3 \U0001F1FA\U0001F1F8 a\u200db",
    "\ue000a \U000F0000x \u0378a \U0010FFFF a\x00b \x01\x02x \x1b[0m",
    "int main() {\n\treturn 0;\n}\n", "    if (x) {\r\n        y();\r\n    }\r\n",
]

TRICKY = [
    0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F,
    0x3000, 0x180E, 0x200B, 0xFEFF, ord("'"), ord("s"), ord("S"), ord("t"), ord("r"), ord("e"), ord("E"),
    ord("v"), ord("m"), ord("l"), ord("L"), ord("d"), 0x017F, 0x212A, 0x0130, 0x00DF, 0x2019, ord("!"),
    ord("$"), ord("~"), ord("."), ord("0"), ord("7"), ord("x"), 0x00E9, 0x01C5, 0x02B0, 0x05D0, 0x1C89,
    0x0301, 0x094D, 0x0903, 0x20DD, 0x0660, 0x00B2, 0x2160, 0xFF10, 0x1D7CE, 0x4E00, 0x9FA5, 0x9FA6,
    0x3040, 0x303F, 0x30FF, 0x3100, 0x3005, 0x3001, 0xAC00, 0x20000, 0x00A9, 0x2764, 0xFE0F, 0x1F600,
    0x1F3FB, 0x200D, 0x00AD, 0xE000, 0x10FFFF, 0x0378, 0x00,
]


def random_text(rng, n):
    out = []
    for _ in range(n):
        k = rng.randrange(100)
        if k < 50:
            cp = rng.choice(TRICKY)
        elif k < 80:
            cp = rng.randrange(0x20, 0x7F)
        else:
            while True:
                cp = rng.randrange(0x80, 0x10000 if k < 92 else 0x110000)
                if not 0xD800 <= cp <= 0xDFFF:
                    break
        out.append(chr(cp))
    return "".join(out)


def builtin_texts():
    with open(os.path.join(HERE, "pretokenizer_sample.txt"), encoding="utf-8", newline="") as f:
        sample = f.read()
    texts = [line for line in sample.splitlines(keepends=True)]
    texts += EDGE_CASES
    rng = random.Random(20250101)
    texts += [random_text(rng, rng.randrange(1, 40)) for _ in range(200)]
    return texts


def corpus_texts(directory):
    texts = []
    for path in sorted(glob.glob(os.path.join(directory, "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    texts.append(json.loads(line)["text"])
    if not texts:
        raise SystemExit("make_split_golden: no text in %s/*.jsonl" % directory)
    return texts


def byte_spans(splitter, text):
    # Removed + invert: only the matches remain, one piece each, with
    # character offsets; convert them to byte offsets.
    starts = [0]
    for ch in text:
        starts.append(starts[-1] + len(ch.encode("utf-8")))
    return [[starts[b], starts[e]] for _, (b, e) in splitter.pre_tokenize_str(text)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", help="directory of .jsonl files to use instead of the built-in texts")
    parser.add_argument("--out", default=os.path.join(HERE, "split_golden.jsonl"))
    args = parser.parse_args()
    pats = patterns()
    splitters = [pre_tokenizers.Split(pattern=Regex(p), behavior="removed", invert=True) for p in pats]
    texts = corpus_texts(args.corpus) if args.corpus else builtin_texts()
    with open(args.out, "w", encoding="utf-8", newline="\n") as out:
        out.write(json.dumps({"tokenizers": tokenizers.__version__, "patterns": pats}, ensure_ascii=True) + "\n")
        for text in texts:
            spans = [byte_spans(s, text) for s in splitters]
            out.write(json.dumps({"text": text, "spans": spans}, ensure_ascii=True, separators=(",", ":")) + "\n")
    print("make_split_golden: %d texts x %d patterns -> %s" % (len(texts), len(pats), args.out))


if __name__ == "__main__":
    main()

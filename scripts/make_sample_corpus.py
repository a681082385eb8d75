#!/usr/bin/env python3
"""Writes multilingual JSONL ({"text": ...} per line) from Faker's locale data,
for machines without a corpus directory. Deterministic (seeded)."""

import json
import random
import sys

from faker import Faker

LOCALES = ["en_US", "de_DE", "fr_FR", "es_ES", "ru_RU", "ar_AA", "hi_IN", "ja_JP", "ko_KR", "zh_CN",
           "zh_TW", "el_GR", "he_IL", "th_TH", "tr_TR", "uk_UA", "vi_VN", "pl_PL", "pt_BR", "it_IT"]


def main(path: str, docs_per_locale: int = 500) -> None:
    rng = random.Random(7)
    with open(path, "w", encoding="utf-8") as out:
        for loc in LOCALES:
            fake = Faker(loc)
            fake.seed_instance(11)
            for _ in range(docs_per_locale):
                text = "\n".join(fake.paragraph(nb_sentences=rng.randint(2, 12)) for _ in range(rng.randint(1, 5)))
                out.write(json.dumps({"text": text, "source": f"faker:{loc}"}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500)

#!/usr/bin/env python3
"""Per-item texts of the trim corpus with Python tiktoken's counts, for
`trim_bench counts` (mend's tokenizer and bpe-openai held against tiktoken item by item).

Each text is a history item gathered as `mend::trim::Counter::count_item` gathers it
(every string, keys excluded, joined by newlines; numbers as " n"); one JSONL line per
item: {"conv", "text", "o200k", "cl100k"} (`encode_ordinary` lengths). Run with
bench/.venv/bin/python after sourcing bench/tiktoken-cache.sh (offline BPE files):

    PY=bench/.venv/bin/python BENCH=bench; . bench/tiktoken-cache.sh
    $PY bench/trim_tokenizers.py bench/corpus/trim.jsonl bench/corpus/trim_items.jsonl
    target/release/examples/trim_bench counts bench/corpus/trim_items.jsonl
"""

from __future__ import annotations

import json
import os
import sys

import tiktoken

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from trim_corpus import gather  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    o200k = tiktoken.get_encoding("o200k_base")
    cl100k = tiktoken.get_encoding("cl100k_base")
    n = 0
    with open(sys.argv[1], encoding="utf-8") as src, open(sys.argv[2], "w", encoding="utf-8") as out:
        for line in src:
            rec = json.loads(line)
            for item in rec["body"]["messages"]:
                text = gather(item)
                out.write(json.dumps({"conv": rec["id"], "text": text,
                                      "o200k": len(o200k.encode_ordinary(text)),
                                      "cl100k": len(cl100k.encode_ordinary(text))}) + "\n")
                n += 1
    print("wrote %d items to %s" % (n, sys.argv[2]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

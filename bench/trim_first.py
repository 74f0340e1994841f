#!/usr/bin/env python3
"""Time LangChain's very first `trim_messages` call in a fresh process, tiktoken's
encoding load included (the counterpart of `trim_bench first`).

LangChain and tiktoken are imported before the timer (as loading mend's binary is not
timed either) and the record's messages are converted to LangChain objects untimed; the
timer covers `tiktoken.get_encoding("o200k_base")` (run by importing bench/trim_langchain.py,
which loads it at import) and the first trim. Prints `{"id", "micros"}`.

    bench/.venv/bin/python bench/trim_first.py --index I bench/corpus/trim.jsonl
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

import tiktoken  # noqa: F401 (imported untimed)
from langchain_core.messages import convert_to_messages, trim_messages  # noqa: F401

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--index", type=int, default=0)
    args = ap.parse_args()
    with open(args.corpus, encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i == args.index:
                rec = json.loads(line)
                break
        else:
            sys.exit("--index is past the corpus' end")
    msgs = convert_to_messages(rec["body"]["messages"])
    t0 = time.perf_counter_ns()
    tl = importlib.import_module("trim_langchain")  # loads o200k_base
    out = tl.trim(msgs, rec["budget"])
    micros = (time.perf_counter_ns() - t0) / 1000.0
    assert out
    print(json.dumps({"id": rec["id"], "micros": micros}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

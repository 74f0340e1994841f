#!/usr/bin/env python3
"""Issue 17 target 3: mend convert against LiteLLM and the AI SDK, from the raw outputs
of one `bench/report` run (bench/results/raw/report-{mend,litellm,aisdk}.jsonl).

For each target dialect (anthropic, gemini, openai_responses) and peer: on the samples
both timed, the median of the per-sample ratios peer time / mend time (each time is the
per-sample median of its repetitions, as bench/report_render.py compares them). Budgets:
>= 5 against LiteLLM (with `modify_params=True`, its fixing mode), >= 10 against the AI
SDK. Writes bench/results/convert_ratios.md, prints it, and when MEND_TARGETS names a
file appends one JSON line per row to it.

    bench/convert_ratios.py [RAW_DIR]      # default bench/results/raw
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
RAW = Path(sys.argv[1]) if len(sys.argv) > 1 else BENCH / "results" / "raw"
TARGETS = ("anthropic", "gemini", "openai_responses")
PEERS = (  # name, raw file, which records, budget
    ("LiteLLM", "report-litellm.jsonl", lambda r: r.get("modify_params") is True, 5.0),
    ("AI SDK", "report-aisdk.jsonl", lambda r: True, 10.0),
)


def times(name: str, keep=lambda r: True) -> dict:
    path = RAW / name
    if not path.exists():
        sys.exit("%s: missing (run bench/report first)" % path)
    out = {}
    for line in open(path, encoding="utf-8"):
        if line.strip():
            r = json.loads(line)
            if r.get("ns") is not None and r["task"].startswith("convert:") and keep(r):
                out[(r["id"], r["task"])] = r["ns"]
    return out


def shown(path: Path) -> str:
    rel = os.path.relpath(path, BENCH.parent)
    return str(path) if rel.startswith("..") else rel


def main() -> None:
    mend = times("report-mend.jsonl")
    rows = []
    for peer, file, keep, budget in PEERS:
        theirs = times(file, keep)
        for target in TARGETS:
            task = "convert:" + target
            ids = sorted({i for (i, t) in mend if t == task} & {i for (i, t) in theirs if t == task})
            if not ids:
                continue
            ratio = statistics.median(theirs[(i, task)] / max(1, mend[(i, task)]) for i in ids)
            peer_us = statistics.median(theirs[(i, task)] for i in ids) / 1e3
            mend_us = statistics.median(mend[(i, task)] for i in ids) / 1e3
            rows.append({
                "target": 3,
                "label": "convert vs %s, openai_chat -> %s" % (peer, target),
                "ratio": round(ratio, 2),
                "budget": ">= %g" % budget,
                "met": ratio >= budget,
                "detail": "%s %.1f µs, mend %.1f µs (medians over %d samples)" % (peer, peer_us, mend_us, len(ids)),
            })
    if not rows:
        sys.exit("no convert timings in %s" % RAW)
    md = ["# convert vs LiteLLM and the AI SDK (issue 17 target 3)", "",
          "From `%s`: per sample, peer time / mend time (each the median of its repetitions); "
          "the ratio is the median over the samples both timed." % shown(RAW), "",
          "| comparison | ratio | budget | met | detail |", "|---|---|---|---|---|"]
    md += ["| %s | %.2fx | %s | %s | %s |" % (r["label"], r["ratio"], r["budget"], "yes" if r["met"] else "**no**",
                                            r["detail"]) for r in rows]
    text = "\n".join(md) + "\n"
    (BENCH / "results" / "convert_ratios.md").write_text(text, encoding="utf-8")
    sys.stdout.write(text)
    if os.environ.get("MEND_TARGETS"):
        with open(os.environ["MEND_TARGETS"], "a", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

"""The target rows the benchmark scripts hand to `bench/report`.

A script that measures a target of issue 16 or 17 appends one JSON line per row to the
file `$MEND_TARGETS` names (bench/report sets it; run alone, a script writes none):
`target`, `label`, `figure` as `ratio`, `budget` as text, `met` (true, false, or null
for a row shown without a budget) and `detail`. `report_render.py` makes the report's
Targets table of them.
"""
from __future__ import annotations

import json
import os


def at_least(target, label: str, ratio: float, minimum: float, detail: str) -> dict:
    """A row whose budget is a ratio of at least `minimum`."""
    ratio = round(ratio, 2)
    return {"target": target, "label": label, "ratio": ratio, "budget": f">= {minimum:g}",
            "met": ratio >= minimum, "detail": detail}


def emit(rows: list[dict]) -> None:
    """Append `rows` to `$MEND_TARGETS`, when it is set."""
    path = os.environ.get("MEND_TARGETS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")

#!/usr/bin/env python3
"""mend's Python binding against the Python peers, in one process and one run.

- repair: `mend.repair(body)` on the dict (the crossing dict -> Rust -> dict included)
  against LiteLLM's `sanitize_messages_for_tool_calling` (the pass LiteLLM runs on
  OpenAI-format messages with `modify_params=True`), on the same generated OpenAI chat
  histories (tool loops from bench/report_corpus.py, half of them with one injected
  defect: an orphan result, a missing result, a result not adjacent to its call, a
  duplicated result or a duplicated call round). LiteLLM may change its input in place,
  so each of its runs gets a deep copy made outside the timer.
- trim: `mend.trim(body, budget)` on the dict against LangChain's `trim_messages` with
  the tiktoken counter of LangChain's guide (bench/trim_langchain.py; its messages are
  converted to LangChain objects once, untimed), to half of each history's tokens.

Beside them, the floors: `mend.check` of the same bodies, dict and bytes, which every
repair runs at least once on its input; LiteLLM's time over a floor is a ratio no repair
can pass.

Times are the median of --reps passes over the whole corpus, after a warm-up pass (the
repair runs take turns pass by pass); the table gives each peer's time as a multiple of
mend's. With MEND_TARGETS set (bench/report does), issue 16's repair target is appended
to that file as JSON lines (target "16": LiteLLM's time over mend.repair's, for a dict
and for bytes; budget >= 5). Every output is checked with
`mend.check`: the share the provider would accept.

Run by bench/python-binding.sh (the venv, `pip install ./bindings/python`, tiktoken's
files offline).
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
import random
import statistics
import sys
import time
import warnings
from importlib.metadata import version
from typing import Any, Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no network at import
warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import litellm  # noqa: E402
from langchain_core.messages import convert_to_messages, convert_to_openai_messages  # noqa: E402
from litellm.litellm_core_utils.prompt_templates.factory import (  # noqa: E402
    sanitize_messages_for_tool_calling,
)

import mend  # noqa: E402
from report_corpus import conversation, damage, render_openai_chat  # noqa: E402
from trim_langchain import tiktoken_counter, trim as langchain_trim  # noqa: E402
import targets as target_rows  # noqa: E402

# LiteLLM's documented switch for fixing histories; without it the sanitizer returns its
# input untouched.
litellm.modify_params = True
logging.getLogger("LiteLLM").setLevel(logging.CRITICAL)  # one warning per duplicate result otherwise

DAMAGES = ["orphan_result", "missing_result", "result_not_adjacent", "duplicate_result", "duplicate_call"]


def corpus(seed: int, count: int, rounds: tuple[int, int]) -> list[dict[str, Any]]:
    r = random.Random(seed)
    out = []
    while len(out) < count:
        turns = conversation(r, r.randint(*rounds), reasoning=False)
        if len(out) % 2 == 1:
            damaged = damage(r, turns, r.choice(DAMAGES))
            if damaged is None:
                continue
            turns = damaged
        out.append(render_openai_chat(turns))
    return out


def timed(passes: int, run: Callable[[], Any]) -> float:
    """Median seconds of one pass, after a warm-up pass."""
    run()
    times = []
    for _ in range(passes):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def valid_share(bodies: list[dict[str, Any]]) -> str:
    ok = sum(mend.check(b).valid for b in bodies)
    return f"{ok}/{len(bodies)}"


def interleaved(passes: int, runs: list[Callable[[], Any]]) -> list[float]:
    """Median seconds of one pass of each run, after a warm-up pass of each; the runs
    take turns, so a change in the machine's load falls on all of them alike."""
    for run in runs:
        run()
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(passes):
        for run, ts in zip(runs, times):
            t0 = time.perf_counter()
            run()
            ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) for ts in times]


def bench_repair(bodies: list[dict[str, Any]], reps: int) -> list[tuple[str, float, str]]:
    raw = [json.dumps(b).encode() for b in bodies]
    copies: list[list[list[dict[str, Any]]]] = [[copy.deepcopy(b["messages"]) for b in bodies] for _ in range(reps + 1)]
    lite_out: list[Any] = []

    def litellm_pass() -> None:
        msgs = copies.pop()
        lite_out[:] = [sanitize_messages_for_tool_calling(m) for m in msgs]

    # The floors: a repair checks its input at least once, so `mend.check` of the same
    # body (the crossing included) is what no `mend.repair` of it can beat.
    m, m_bytes, lite, floor, floor_bytes = interleaved(
        reps,
        [lambda: [mend.repair(b) for b in bodies], lambda: [mend.repair(b) for b in raw], litellm_pass,
         lambda: [mend.check(b) for b in bodies], lambda: [mend.check(b) for b in raw]],
    )
    mend_out = [mend.repair(b).body for b in bodies]
    lite_bodies = [{**b, "messages": m} for b, m in zip(bodies, lite_out)]
    return [
        ("repair  mend.repair(dict)", m, valid_share(mend_out)),
        ("repair  mend.repair(bytes)", m_bytes, valid_share(mend_out)),
        ("repair  litellm sanitize_messages_for_tool_calling", lite, valid_share(lite_bodies)),
        ("repair  floor: mend.check(dict), no repair", floor, "-"),
        ("repair  floor: mend.check(bytes), no repair", floor_bytes, "-"),
    ]


def bench_trim(bodies: list[dict[str, Any]], reps: int, fresh: Callable[[int], list[dict[str, Any]]] | None = None
               ) -> list[tuple[str, float, str]]:
    """mend.trim against LangChain on the same histories. mend's binding keeps a
    process-wide memo of item counts, so the passes after the warm-up are what repeated
    calls on a (growing) history cost; with `fresh`, also a cold figure: each pass on
    histories never seen before (fresh(k) builds the k-th set, outside the timer), both
    tools on the same ones."""
    budgets = [mend.trim(b, 10**9).tokens_before // 2 for b in bodies]
    m = timed(reps, lambda: [mend.trim(b, n) for b, n in zip(bodies, budgets)])
    lc_msgs = [convert_to_messages(b["messages"]) for b in bodies]
    lc = timed(reps, lambda: [langchain_trim(msgs, n) for msgs, n in zip(lc_msgs, budgets)])
    mend_out = [mend.trim(b, n).body for b, n in zip(bodies, budgets)]
    lc_out = [
        {"model": "gpt-4o", "messages": convert_to_openai_messages(langchain_trim(msgs, n)), "tools": b["tools"]}
        for b, msgs, n in zip(bodies, lc_msgs, budgets)
    ]
    assert tiktoken_counter(lc_msgs[0]) > 0
    rows = [
        ("trim    mend.trim(dict), repeated calls (count memo warm)", m, valid_share(mend_out)),
        ("trim    langchain trim_messages (tiktoken)", lc, valid_share(lc_out)),
    ]
    if fresh is not None:
        cold_m, cold_lc = [], []
        for k in range(reps):
            new = fresh(k)
            # Budgets from LangChain's own counter, so mend sees nothing of `new` untimed.
            new_msgs = [convert_to_messages(b["messages"]) for b in new]
            new_budgets = [tiktoken_counter(x) // 2 for x in new_msgs]
            t0 = time.perf_counter()
            cold_out = [mend.trim(b, n) for b, n in zip(new, new_budgets)]
            cold_m.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            [langchain_trim(x, n) for x, n in zip(new_msgs, new_budgets)]
            cold_lc.append(time.perf_counter() - t0)
            assert len(cold_out) == len(new)
        scale = len(bodies) / max(1, len(new))
        rows.append(("trim    mend.trim(dict), new histories (cold)",
                     statistics.median(cold_m) * scale, "-"))
        rows.append(("trim    langchain trim_messages on the same new histories",
                     statistics.median(cold_lc) * scale, "-"))
    return rows


def emit_trim_targets(trows: list[tuple[str, float, str]]) -> None:
    """Issue 16's trim row(s) for bench/report: LangChain time / mend.trim time."""
    t = {name: secs for name, secs, _ in trows}
    pairs = [("mend.trim(dict) vs LangChain trim_messages + tiktoken, repeated calls (count memo warm)",
              "trim    langchain trim_messages (tiktoken)", "trim    mend.trim(dict), repeated calls (count memo warm)"),
             ("mend.trim(dict) vs LangChain trim_messages + tiktoken, new histories (cold)",
              "trim    langchain trim_messages on the same new histories", "trim    mend.trim(dict), new histories (cold)")]
    target_rows.emit([
        target_rows.at_least("16", label, t[peer] / t[ours], 20,
                             "LangChain %.1f ms, mend %.1f ms per pass" % (t[peer] * 1e3, t[ours] * 1e3))
        for label, peer, ours in pairs
        if peer in t and ours in t and t[ours] > 0
    ])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--count", type=int, default=240, help="histories per task")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()

    repair_corpus = corpus(args.seed, args.count, (2, 8))
    trim_corpus = corpus(args.seed + 1, args.count, (10, 30))
    valid_trim = [b for b in trim_corpus if mend.check(b).valid]  # trim is a task on valid histories
    rows = bench_repair(repair_corpus, args.reps)
    base = rows[0][1]
    def fresh_trim(k: int) -> list[dict[str, Any]]:
        return [b for b in corpus(args.seed + 100 + k, args.count // 4, (10, 30)) if mend.check(b).valid]

    trows = bench_trim(valid_trim, args.reps, fresh_trim)
    emit_trim_targets(trows)
    trows, crows = trows[:2], trows[2:]  # warm, then cold (each "x mend's" against its own mend row)
    tbase = trows[0][1]

    msgs = sum(len(b["messages"]) for b in repair_corpus)
    tmsgs = sum(len(b["messages"]) for b in valid_trim)
    print(f"repair corpus: {len(repair_corpus)} OpenAI chat histories ({msgs} messages, "
          f"{sum(not mend.check(b).valid for b in repair_corpus)} damaged); trim corpus: "
          f"{len(valid_trim)} valid histories ({tmsgs} messages), budget half of each")
    print(f"mend {mend.__version__}, litellm {version('litellm')}, langchain-core {version('langchain-core')}, "
          f"tiktoken {version('tiktoken')}, python {sys.version.split()[0]}; median of {args.reps} passes")
    print()
    print("| task | time per pass | per history | x mend's | output valid (mend.check) |")
    print("|---|---:|---:|---:|---:|")
    groups = [(rows, base, len(repair_corpus)), (trows, tbase, len(valid_trim))]
    groups += [(crows, crows[0][1], len(valid_trim))] if crows else []
    for rows_, b, n in groups:
        for name, t, ok in rows_:
            print(f"| {name} | {t * 1e3:.1f} ms | {t / n * 1e6:.0f} µs | {t / b:.1f} | {ok} |")
    targets(rows, len(repair_corpus))
    return 0


def targets(rows: list[tuple[str, float, str]], n: int) -> None:
    """Issue 16's repair target, one line per mend row, appended to $MEND_TARGETS when
    bench/report sets it: LiteLLM's time over mend's, the crossing included."""
    lite = rows[2][1]
    target_rows.emit([
        target_rows.at_least(
            "16",
            f"Python mend.repair({form}) vs LiteLLM sanitize_messages_for_tool_calling, {n} OpenAI chat histories",
            lite / t, 5, f"mend {t / n * 1e6:.0f} µs vs LiteLLM {lite / n * 1e6:.0f} µs per history; "
            f"floor in this run: LiteLLM / mend.check({form}) = {lite / floor:.2f}")
        for (name, t, _), (_, floor, _), form in zip(rows[:2], rows[3:5], ("dict", "bytes"))
    ])


if __name__ == "__main__":
    sys.exit(main())

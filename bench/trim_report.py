#!/usr/bin/env python3
"""Merge the raw results of trim-vs-langchain.sh into bench/results/trim-vs-langchain.md.

Inputs (bench/results/raw/): mend.jsonl (trim_bench trim mode; `micros_count` is counting
alone, the floor of a cold trim), langchain.jsonl
(trim_langchain.py), langchain_check.jsonl and langchain_default_check.jsonl
(trim_bench check mode over LangChain's outputs), meta.json (versions, machine, CLI
cross-check). Standard library only.
"""

from __future__ import annotations

import collections
import json
import os
import statistics
import sys

import targets as target_rows

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "results", "raw")
OUT = os.path.join(HERE, "results", "trim-vs-langchain.md")


def load(name: str) -> dict[str, dict]:
    with open(os.path.join(RAW, name), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {str(r["id"]): r for r in rows}


def pct(xs: list[float], p: float) -> float:
    """Percentile by linear interpolation (p in 0..100)."""
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary(xs: list[float]) -> str:
    return "%.1fx | %.1fx | %.1fx | %.1fx" % (statistics.median(xs), pct(xs, 10), pct(xs, 90), min(xs))


def rule_counts(checks: dict[str, dict]) -> str:
    c = collections.Counter(rule for r in checks.values() for rule in set(r["rules"]))
    return ", ".join("`%s` %d" % kv for kv in c.most_common()) or "none"


def first_calls() -> tuple[float, float, float] | None:
    """Median first-call times (mend, LangChain) in µs and the median per-record ratio."""
    try:
        m = [json.loads(l) for l in open(os.path.join(RAW, "mend_first.jsonl"), encoding="utf-8") if l.strip()]
        c = [json.loads(l) for l in open(os.path.join(RAW, "langchain_first.jsonl"), encoding="utf-8") if l.strip()]
    except OSError:
        return None
    if not m or len(m) != len(c):
        return None
    return (statistics.median(r["micros"] for r in m), statistics.median(r["micros"] for r in c),
            statistics.median(b["micros"] / a["micros"] for a, b in zip(m, c)))


def floor_detail(floor: list[float] | None, count_us: float | None, mend_us: float,
                 checked: tuple[list[float], float] | None = None) -> str:
    """The cold row's floors: LangChain's time over mend's counting alone, and over counting
    with the input's and the output's checks (what a trim that verifies its output cannot
    skip), same run."""
    if not floor or count_us is None:
        return ""
    text = ("; floor in this run: LangChain / counting alone = %.1f (counting %.0f µs of mend's median "
            "%.0f µs, no check, no output)" % (statistics.median(floor), count_us, mend_us))
    if checked:
        text += ("; with the input and the output checked as a trim does = %.1f (%.0f µs)"
                 % (statistics.median(checked[0]), checked[1]))
    return text


def emit_targets(cold: list[float], warm: list[float], first, mend_us: tuple[float, float],
                 lc_us: float, floor: list[float] | None, count_us: float | None,
                 checked: tuple[list[float], float] | None = None) -> None:
    """Issue 17 target 4 rows for bench/report (when MEND_TARGETS names a file)."""
    rows = [
        target_rows.at_least(4, "trim vs LangChain trim_messages + tiktoken, cold (first call on a new history, "
                             "tokenizer already loaded; median per conversation)", statistics.median(cold), 50,
                             "LangChain %.0f µs, mend %.0f µs (medians)%s" % (
                                 lc_us, mend_us[0], floor_detail(floor, count_us, mend_us[0], checked))),
        target_rows.at_least(4, "trim vs LangChain, warm (trim_with_cache, same conversation again)",
                             statistics.median(warm), 50,
                             "LangChain %.0f µs, mend %.0f µs (medians)" % (lc_us, mend_us[1])),
    ]
    if first:
        rows.append({"target": 4, "label": "trim vs LangChain, very first call of a process (tokenizer load "
                     "included; shown, the target is for a loaded tokenizer)", "ratio": round(first[2], 2),
                     "budget": "none", "met": None,
                     "detail": "LangChain %.0f ms, mend %.0f ms (medians)" % (first[1] / 1e3, first[0] / 1e3)})
    target_rows.emit(rows)


def main() -> int:
    mend = load("mend.jsonl")
    lc = load("langchain.jsonl")
    lc_check = load("langchain_check.jsonl")
    lcd_check = load("langchain_default_check.jsonl")
    with open(os.path.join(RAW, "meta.json"), encoding="utf-8") as f:
        meta = json.load(f)
    ids = [i for i in mend if i in lc and i in lc_check]
    n = len(ids)
    if n == 0:
        print("no conversations in common", file=sys.stderr)
        return 1

    ratio = {i: lc[i]["micros"] / mend[i]["micros"] for i in ids}
    ratio_cached = {i: lc[i]["micros"] / mend[i]["micros_cached"] for i in ids}
    has_lc_cached = all(lc[i].get("micros_cached") for i in ids)
    # Counting alone (older trim_bench output has none).
    has_floor = all(mend[i].get("micros_count") for i in ids)
    floor = [lc[i]["micros"] / mend[i]["micros_count"] for i in ids] if has_floor else None
    count_us = statistics.median(mend[i]["micros_count"] for i in ids) if has_floor else None
    # Counting with the two checks a trim makes (older trim_bench output has none).
    checked = None
    if all(mend[i].get("micros_count_checked") for i in ids):
        checked = ([lc[i]["micros"] / mend[i]["micros_count_checked"] for i in ids],
                   statistics.median(mend[i]["micros_count_checked"] for i in ids))
    kinds = sorted({mend[i]["kind"] for i in ids})

    mend_invalid = [i for i in ids if not mend[i]["valid"]]
    lc_invalid = [i for i in ids if not lc_check[i]["valid"]]
    lcd_invalid = [i for i in ids if i in lcd_check and not lcd_check[i]["valid"]]
    mend_rules = {i: {"rules": mend[i]["rules"]} for i in mend_invalid}

    def count(rows, pred) -> int:
        return sum(1 for i in ids if pred(rows[i]))

    L = []
    w = L.append
    w("# trim: mend vs LangChain `trim_messages`\n")
    w("Generated by `bench/trim-vs-langchain.sh` (do not edit by hand). Corpus: %d OpenAI chat "
      "conversations from `bench/trim_corpus.py --seed %s` (%s), each with a budget of 30-60 %% "
      "of its tokens.\n" % (n, meta.get("seed"), ", ".join(
          "%s %d" % (k, sum(1 for i in ids if mend[i]["kind"] == k)) for k in kinds)))
    w("## Speed (ratio = LangChain time / mend time, per conversation)\n")
    w("| comparison | median | p10 | p90 | min |")
    w("|---|---|---|---|---|")
    w("| LangChain + tiktoken vs `mend::trim::trim` (cold: a first call on a new history, "
      "tokenizer already loaded, every message tokenized) | %s |" % summary(list(ratio.values())))
    if floor:
        w("| floor: LangChain + tiktoken vs mend counting alone (every item through the same "
          "tokenizer, as a cold trim counts it; no check, no output) | %s |" % summary(floor))
    if checked:
        w("| floor: LangChain + tiktoken vs mend counting with the input's and the output's checks "
          "(what a trim that verifies what it hands on cannot skip) | %s |" % summary(checked[0]))
    w("| LangChain + tiktoken vs `mend::trim::trim_with_cache` (warm cache) | %s |"
      % summary(list(ratio_cached.values())))
    if has_lc_cached:
        both = [lc[i]["micros_cached"] / mend[i]["micros_cached"] for i in ids]
        w("| LangChain with a memoized string counter vs `trim_with_cache` (both warm) | %s |"
          % summary(both))
    first = first_calls()
    if first:
        w("| LangChain + tiktoken vs `mend::trim::trim`, the very first call of a process "
          "(tokenizer load included; median of %d fresh processes per tool) | %.1fx | | | |" % (
              sum(1 for _ in open(os.path.join(RAW, "mend_first.jsonl"))), first[2]))
    w("")
    if first:
        w("First call (median): mend %.1f ms, LangChain %.1f ms (tiktoken's `get_encoding` plus the "
          "trim; imports are not timed on either side).\n" % (first[0] / 1e3, first[1] / 1e3))
    emit_targets(list(ratio.values()), list(ratio_cached.values()), first,
                 (statistics.median(mend[i]["micros"] for i in ids),
                  statistics.median(mend[i]["micros_cached"] for i in ids)),
                 statistics.median(lc[i]["micros"] for i in ids), floor, count_us, checked)
    w("Target (DESIGN.md, Performance budget): at least 50x. Cold: %s (median %.1fx). "
      "Warm cache: %s (median %.1fx).\n" % (
          "met" if statistics.median(ratio.values()) >= 50 else "NOT met",
          statistics.median(ratio.values()),
          "met" if statistics.median(ratio_cached.values()) >= 50 else "NOT met",
          statistics.median(ratio_cached.values())))
    if floor:
        w("Counting alone (the cold row's floor): median %.0f µs of mend's cold %.0f µs; LangChain's "
          "time over it %.1fx (median per conversation). The rest of a cold trim (two checks, "
          "the cut, the output) is the difference.\n" % (
              count_us, statistics.median(mend[i]["micros"] for i in ids), statistics.median(floor)))
    w("| kind | n | median LangChain µs | median mend µs (cold) | median mend µs (cached) "
      "| median ratio cold | median ratio cached |")
    w("|---|---|---|---|---|---|---|")
    for k in kinds + ["all"]:
        ks = [i for i in ids if k == "all" or mend[i]["kind"] == k]
        w("| %s | %d | %.0f | %.0f | %.0f | %.1fx | %.1fx |" % (
            k, len(ks),
            statistics.median(lc[i]["micros"] for i in ks),
            statistics.median(mend[i]["micros"] for i in ks),
            statistics.median(mend[i]["micros_cached"] for i in ks),
            statistics.median(ratio[i] for i in ks),
            statistics.median(ratio_cached[i] for i in ks)))
    w("")
    w("## Correctness (outputs judged by mend's checker, `openai` profile)\n")
    w("| tool | outputs | rejected by the provider | rules | no user message left | "
      "latest message dropped | over budget (own count) |")
    w("|---|---|---|---|---|---|---|")
    w("| mend trim (keep_last %s) | %d | %d | %s | %d | %d | %d |" % (
        meta.get("keep_last"), n, len(mend_invalid), rule_counts(mend_rules) if mend_invalid else "none",
        count(mend, lambda r: not r["has_user"]), count(mend, lambda r: not r["last_kept"]),
        count(mend, lambda r: r["over_budget"])))
    w("| LangChain `start_on=\"human\"` (the guide's setting, timed) | %d | %d | %s | %d | %d | %d |" % (
        n, len(lc_invalid), rule_counts({i: lc_check[i] for i in lc_invalid}),
        count(lc, lambda r: not r["has_user"]), count(lc, lambda r: not r["last_kept"]),
        count(lc, lambda r: r["tokens_after"] > r["budget"])))
    if lcd_check:
        w("| LangChain without `start_on` (its default) | %d | %d | %s | | | |" % (
            n, len(lcd_invalid), rule_counts({i: lcd_check[i] for i in lcd_invalid})))
    w("")
    cli = meta.get("cli_check")
    if cli:
        w("Cross-check with the CLI (`mend check --jsonl --json --provider openai` on LangChain's "
          "outputs): %s.\n" % cli)
    over = [i for i in ids if mend[i]["over_budget"]]
    if over:
        w("mend went over budget on %d conversation(s) (kinds: %s; median tokens_after/budget "
          "%.2f): when the units that fit do not begin at a user turn, trim keeps back to the "
          "previous user turn, even when that is the whole history.\n" % (
              len(over), ", ".join(sorted({mend[i]["kind"] for i in over})),
              statistics.median(mend[i]["tokens_after"] / mend[i]["budget"] for i in over)))
    w("Token counts: mend counted %d tokens over the corpus, LangChain's counter %d (%.1f %% apart); "
      "the budget is the same absolute number for both.\n" % (
          sum(mend[i]["tokens_before"] for i in ids), sum(lc[i]["tokens_before"] for i in ids),
          100.0 * abs(sum(mend[i]["tokens_before"] for i in ids) - sum(lc[i]["tokens_before"] for i in ids))
          / max(1, sum(mend[i]["tokens_before"] for i in ids))))
    w("## Method\n")
    w("- Both tools run in-process on the same machine, one after the other; each conversation is "
      "timed %s times (median) after a warm-up pass over the whole corpus (tokenizers loaded); "
      "the uncached runs go round the whole corpus once per repetition on both sides, so no "
      "conversation is timed with the tables its own previous run warmed. "
      "mend gets parsed JSON (`serde_json::Value`), LangChain gets `BaseMessage` objects: "
      "neither parsing nor conversion is timed." % meta.get("reps"))
    w("- LangChain: `trim_messages(messages, max_tokens=budget, token_counter=tiktoken_counter, "
      "strategy=\"last\", include_system=True, start_on=\"human\", allow_partial=False)` with the "
      "counter from LangChain's trimming guide (o200k_base, 3 tokens per message plus role and "
      "content) extended to tool call ids, names, arguments and `tool_call_id`; outputs converted "
      "back with `convert_to_openai_messages`.")
    w("- mend: `mend::trim::trim` with the body's model (gpt-4o, o200k_base), keep_last %s, "
      "protect 0, provider `openai`; the cached figure is `trim_with_cache` with a cache warmed "
      "on the same conversation." % meta.get("keep_last"))
    w("- \"Rejected by the provider\": an error-severity finding of mend's checker "
      "(`trim_bench check`), e.g. `tool-result-without-call` for an orphan tool message, "
      "`empty-content` for an empty `messages` array.")
    w("- Machine: %s, %s CPU(s), load average %s before and %s after.\n" % (
        meta.get("machine"), meta.get("cpus"), meta.get("load_before"), meta.get("load_after")))
    w("## Versions\n")
    for k in ("mend", "rustc", "mend tokenizer", "BPE files for Python tiktoken", "python", "langchain-core", "tiktoken"):
        if meta.get(k):
            w("- %s %s" % (k, meta[k]))
    w("")
    text = "\n".join(L)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

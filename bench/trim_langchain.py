#!/usr/bin/env python3
"""Time LangChain's `trim_messages` (tiktoken counting) on the trim corpus.

Run with bench/.venv/bin/python and TIKTOKEN_CACHE_DIR set (trim-vs-langchain.sh does
both). For each conversation of the corpus (bench/trim_corpus.py):

- the OpenAI chat dicts are converted to LangChain messages once (not timed: an app that
  uses LangChain already holds BaseMessage objects, as mend's caller holds parsed JSON);
- `trim_messages(messages, max_tokens=budget, token_counter=tiktoken_counter,
  strategy="last", include_system=True, start_on="human", allow_partial=False)` is
  timed in-process: the median of --reps runs, each run a round over the whole corpus,
  after one warm-up pass over the corpus (the encoding is loaded before anything is timed);
- the output is converted back with `convert_to_openai_messages` and written as
  `{"id", "body"}` JSONL for `mend check`.

`tiktoken_counter` is the counter from LangChain's "How to trim messages" guide (3 tokens
per message plus the role's and content's o200k_base tokens, plus 3 for the reply primer,
plus the name), with the encoding fetched once instead of per string, and extended to
count what the guide leaves out for simplicity: each tool call's id, name and arguments
and a tool message's tool_call_id. Without that extension tool rounds would look almost
free and the two tools would not be cutting to the same budget.

A second configuration, LangChain's defaults for the validity options (no `start_on`),
is run once per conversation, untimed, to show what the guide's `start_on="human"` is
there to prevent.

With --cached, the same trim is also timed with the string counter memoized
(functools.lru_cache, warmed by the warm-up pass), the counterpart of mend's
`trim_with_cache`: it shows what is left of LangChain's cost once tokenizing is free.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import time
from importlib.metadata import version

import tiktoken
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
    trim_messages,
)

ENC = tiktoken.get_encoding("o200k_base")


def str_token_counter(text: str) -> int:
    return len(ENC.encode(text))


@functools.lru_cache(maxsize=None)
def cached_str_token_counter(text: str) -> int:
    return len(ENC.encode(text))


def tiktoken_counter(messages: list[BaseMessage], str_token_counter=str_token_counter) -> int:
    """LangChain's documented tiktoken counter, plus tool calls (see the module doc)."""
    num_tokens = 3  # every reply is primed with <|start|>assistant<|message|>
    tokens_per_message = 3
    tokens_per_name = 1
    for msg in messages:
        if isinstance(msg, HumanMessage):
            role = "user"
        elif isinstance(msg, AIMessage):
            role = "assistant"
        elif isinstance(msg, ToolMessage):
            role = "tool"
        elif isinstance(msg, SystemMessage):
            role = "system"
        else:
            raise ValueError(f"Unsupported messages type {msg.__class__}")
        num_tokens += tokens_per_message + str_token_counter(role) + str_token_counter(msg.content)
        if msg.name:
            num_tokens += tokens_per_name + str_token_counter(msg.name)
        if isinstance(msg, AIMessage):
            for tc in msg.tool_calls:
                num_tokens += (
                    str_token_counter(tc["id"] or "")
                    + str_token_counter(tc["name"])
                    + str_token_counter(json.dumps(tc["args"], ensure_ascii=False))
                )
        elif isinstance(msg, ToolMessage):
            num_tokens += str_token_counter(msg.tool_call_id)
    return num_tokens


def cached_counter(messages: list[BaseMessage]) -> int:
    return tiktoken_counter(messages, cached_str_token_counter)


def trim(msgs: list[BaseMessage], budget: int, start_on: str | None = "human",
         counter=tiktoken_counter) -> list[BaseMessage]:
    return trim_messages(
        msgs,
        max_tokens=budget,
        token_counter=counter,
        strategy="last",
        include_system=True,
        start_on=start_on,
        allow_partial=False,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--results", required=True, help="JSONL: one timing line per conversation")
    ap.add_argument("--bodies", required=True, help="JSONL of {id, body}: the trimmed outputs")
    ap.add_argument("--bodies-default", help="JSONL of {id, body} for the no-start_on configuration")
    ap.add_argument("--cached", action="store_true", help="also time with a memoized string counter")
    args = ap.parse_args()

    corpus = [json.loads(line) for line in open(args.corpus, encoding="utf-8") if line.strip()]
    prepared = [(rec, convert_to_messages(rec["body"]["messages"])) for rec in corpus]

    for rec, msgs in prepared:  # warm-up
        trim(msgs, rec["budget"])
        if args.cached:
            trim(msgs, rec["budget"], counter=cached_counter)

    reps = max(1, args.reps)
    # Uncached timings go round the whole corpus once per repetition (as trim_bench does),
    # so a conversation's second run does not find tiktoken's tables hot from its first.
    round_times: list[list[float]] = [[] for _ in prepared]
    for _ in range(reps):
        for k, (rec, msgs) in enumerate(prepared):
            t0 = time.perf_counter_ns()
            trim(msgs, rec["budget"])
            round_times[k].append((time.perf_counter_ns() - t0) / 1000.0)
    with open(args.results, "w", encoding="utf-8") as res, \
            open(args.bodies, "w", encoding="utf-8") as bodies:
        bodies_default = open(args.bodies_default, "w", encoding="utf-8") if args.bodies_default else None
        for (rec, msgs), times in zip(prepared, round_times):
            budget = rec["budget"]
            out = trim(msgs, budget)
            cached_micros = None
            if args.cached:
                ctimes = []
                for _ in range(reps):
                    t0 = time.perf_counter_ns()
                    cout = trim(msgs, budget, counter=cached_counter)
                    ctimes.append((time.perf_counter_ns() - t0) / 1000.0)
                assert len(cout) == len(out)
                cached_micros = statistics.median(ctimes)
            body_msgs = convert_to_openai_messages(out)
            kept_roles = [m["role"] for m in body_msgs]
            res.write(json.dumps({
                "id": rec["id"],
                "kind": rec["kind"],
                "micros": statistics.median(times),
                "micros_cached": cached_micros,
                "budget": budget,
                "tokens_before": tiktoken_counter(msgs),
                "tokens_after": tiktoken_counter(out),
                "messages_before": len(msgs),
                "messages_kept": len(out),
                "has_user": "user" in kept_roles,
                "last_kept": bool(out) and out[-1] is msgs[-1],
            }) + "\n")
            bodies.write(json.dumps({"id": rec["id"], "body": {"model": "gpt-4o", "messages": body_msgs}},
                                    ensure_ascii=False) + "\n")
            if bodies_default is not None:
                d = convert_to_openai_messages(trim(msgs, budget, start_on=None))
                bodies_default.write(json.dumps({"id": rec["id"], "body": {"model": "gpt-4o", "messages": d}},
                                                ensure_ascii=False) + "\n")
        if bodies_default is not None:
            bodies_default.close()
    print(json.dumps({"langchain-core": version("langchain-core"), "tiktoken": version("tiktoken"),
                      "python": sys.version.split()[0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

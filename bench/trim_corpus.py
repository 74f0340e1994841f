#!/usr/bin/env python3
"""Generate a deterministic corpus of OpenAI chat conversations for the trim benchmark.

Each JSONL line is one conversation:

    {"id": "...", "kind": "...", "messages_count": N, "tokens": T, "budget": B,
     "body": {"model": "gpt-4o", "messages": [...]}}

Kinds: `plain` (user/assistant chat), `tool_loop` (one call per round, some chained),
`parallel` (2-4 calls per round, answered in shuffled order), `long_loop` (50-300
messages mixing all of the above), `agent_run` (one user request, then a long run of tool
rounds with no user turn in between, as coding agents produce). About half have a system
message. Every conversation ends where a request is sent: on a user message or on the
tool results of the last round.

`tokens` is the history's size counted the way `mend::trim` counts it (o200k_base over
every string of a message joined by newlines, plus 3 per message), and `budget` a
fraction of it (30-60 %), so that trimming has to cut in the middle. Counting needs
tiktoken (run this with bench/.venv/bin/python; see trim-vs-langchain.sh for the offline
setup); without it, pass --no-budget and the budget is left out.

Usage: trim_corpus.py [--seed 7] [--count 240] [--out bench/corpus/trim.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import string
import sys

WORDS = (
    "the a an of to in and for on with is are was be this that it as by from at or not "
    "weather city forecast rain sun wind temperature report order invoice customer refund "
    "database query table index migration deploy build test failure error stack trace "
    "function module import config file path directory branch commit review merge release "
    "latency budget token model request response stream retry timeout cache memory disk "
    "please could you check why does how what when where which should would can will "
    "summary detail step first then next finally because however therefore also only"
).split()
EXTRA = [
    "naïve café déjà-vu", "Grüße aus München", "東京の天気は晴れです", "¿Qué tal?",
    "emoji ✅ 🚀 📦", "x = f(y) + 2 * z", "SELECT id, total FROM orders WHERE id = 42;",
    "https://example.com/api/v2/items?page=3", "C:\\Users\\dev\\project\\main.rs",
]
TOOLS = {
    "get_weather": lambda r: {"city": r.choice(["Paris", "Rome", "Oslo", "Lima", "Kyoto"]),
                              "unit": r.choice(["c", "f"])},
    "search_docs": lambda r: {"query": sentence(r, 3, 9), "limit": r.randint(3, 10)},
    "read_file": lambda r: {"path": "src/" + r.choice(["main", "lib", "trim", "check"]) + ".rs"},
    "run_sql": lambda r: {"sql": "SELECT * FROM orders WHERE customer_id = %d" % r.randint(1, 999)},
    "list_dir": lambda r: {"path": r.choice([".", "src", "tests", "bench"])},
    "http_get": lambda r: {"url": "https://api.example.com/v1/items/%d" % r.randint(1, 9999)},
}
ALNUM = string.ascii_letters + string.digits


def sentence(r: random.Random, lo: int, hi: int) -> str:
    words = [r.choice(WORDS) for _ in range(r.randint(lo, hi))]
    if r.random() < 0.15:
        words.insert(r.randrange(len(words) + 1), r.choice(EXTRA))
    s = " ".join(words)
    return s[:1].upper() + s[1:] + r.choice([".", ".", "?", "!"])


def paragraph(r: random.Random, lo: int, hi: int) -> str:
    parts = [sentence(r, 4, 16) for _ in range(r.randint(lo, hi))]
    if r.random() < 0.3:
        # multi-line: a list or a code block
        if r.random() < 0.5:
            parts.append("\n" + "\n".join("- " + sentence(r, 2, 8) for _ in range(r.randint(2, 5))))
        else:
            code = "\n".join("    let v%d = compute(%d);" % (i, r.randint(0, 99)) for i in range(r.randint(2, 6)))
            parts.append("\n```rust\nfn main() {\n" + code + "\n}\n```")
    return " ".join(parts)


def tool_output(r: random.Random, name: str) -> str:
    if name == "get_weather":
        out = {"temp": r.randint(-10, 35), "conditions": r.choice(["rain", "sun", "snow", "fog"])}
    elif name == "read_file":
        out = {"content": "\n".join("fn f%d() -> u32 { %d }" % (i, r.randint(0, 999))
                                    for i in range(r.randint(3, 40)))}
    elif name == "run_sql":
        out = {"rows": [{"id": r.randint(1, 10**6), "total": round(r.uniform(1, 500), 2),
                         "status": r.choice(["paid", "open", "refunded"])}
                        for _ in range(r.randint(1, 25))]}
    else:
        out = {"results": [{"title": sentence(r, 2, 6), "snippet": sentence(r, 8, 24)}
                           for _ in range(r.randint(1, 8))]}
    return json.dumps(out, ensure_ascii=False)


class Gen:
    def __init__(self, r: random.Random):
        self.r = r
        self.msgs: list[dict] = []

    def call_id(self) -> str:
        return "call_" + "".join(self.r.choice(ALNUM) for _ in range(24))

    def user(self) -> None:
        self.msgs.append({"role": "user", "content": paragraph(self.r, 1, 4)})

    def assistant(self) -> None:
        self.msgs.append({"role": "assistant", "content": paragraph(self.r, 1, 6)})

    def tool_round(self, n_calls: int, answered: bool = True) -> None:
        """One assistant turn with `n_calls` calls, then its results in shuffled order."""
        r = self.r
        calls = []
        for _ in range(n_calls):
            name = r.choice(list(TOOLS))
            calls.append({"id": self.call_id(), "type": "function",
                          "function": {"name": name,
                                       "arguments": json.dumps(TOOLS[name](r), ensure_ascii=False)}})
        msg = {"role": "assistant", "content": None, "tool_calls": calls}
        if r.random() < 0.2:
            msg["content"] = sentence(r, 4, 12)  # "Let me check." before the calls
        self.msgs.append(msg)
        if not answered:
            return
        order = list(calls)
        r.shuffle(order)
        for c in order:
            self.msgs.append({"role": "tool", "tool_call_id": c["id"],
                              "content": tool_output(r, c["function"]["name"])})

    def exchange(self, kind: str) -> None:
        """A user turn and everything up to the assistant's final answer."""
        r = self.r
        self.user()
        if kind == "plain":
            self.assistant()
            return
        rounds = 1 if kind != "chain" else r.randint(2, 4)
        for _ in range(rounds):
            n = 1 if kind in ("tool", "chain") else r.randint(2, 4)
            self.tool_round(n)
        self.assistant()


def end_open(g: Gen, kinds: list[str]) -> None:
    """End where a request is sent: a new user message, or the results of a new round."""
    r = g.r
    if r.random() < 0.6:
        g.user()
    else:
        g.user()
        kind = r.choice(kinds)
        g.tool_round(1 if kind in ("tool", "chain", "plain") else r.randint(2, 4))


def conversation(r: random.Random, kind: str) -> list[dict]:
    g = Gen(r)
    if r.random() < 0.5:
        g.msgs.append({"role": "system", "content": paragraph(r, 1, 5)})
    if kind == "plain":
        target, mix = r.randint(8, 40), ["plain"]
    elif kind == "tool_loop":
        target, mix = r.randint(12, 50), ["plain", "tool", "tool", "chain"]
    elif kind == "parallel":
        target, mix = r.randint(12, 60), ["plain", "parallel", "parallel", "chain"]
    elif kind == "long_loop":
        target, mix = r.randint(50, 300), ["plain", "tool", "chain", "parallel", "parallel"]
    elif kind == "agent_run":
        # a few exchanges, then one request that runs a long tool loop
        for _ in range(r.randint(0, 3)):
            g.exchange(r.choice(["plain", "tool", "parallel"]))
        g.user()
        for _ in range(r.randint(15, 70)):
            g.tool_round(r.choice([1, 1, 2, 3, 4]))
        return g.msgs
    else:
        raise ValueError(kind)
    while len(g.msgs) < target:
        g.exchange(r.choice(mix))
    end_open(g, mix)
    return g.msgs


def gather(item) -> str:
    """The text mend::trim::Counter::count_item counts of an item: every string (keys
    excluded) joined by a newline, numbers as " n"."""
    out: list[str] = []

    def walk(v) -> None:
        if isinstance(v, str):
            if out:
                out.append("\n")
            out.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, bool) or v is None:
            pass
        elif isinstance(v, (int, float)):
            out.append(" " + json.dumps(v))

    walk(item)
    return "".join(out)


def mend_tokens(enc, msg: dict) -> int:
    """Exactly mend::trim::Counter::count_item: the gathered text plus 3 tokens of
    framing."""
    return 3 + len(enc.encode_ordinary(gather(msg)))


KINDS = [("plain", 0.15), ("tool_loop", 0.2), ("parallel", 0.25), ("long_loop", 0.28),
         ("agent_run", 0.12)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--count", type=int, default=240)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "corpus", "trim.jsonl"))
    ap.add_argument("--no-budget", action="store_true", help="do not count tokens (no tiktoken needed)")
    args = ap.parse_args()

    enc = None
    if not args.no_budget:
        import tiktoken  # noqa: PLC0415 (optional dependency)
        enc = tiktoken.get_encoding("o200k_base")

    r = random.Random(args.seed)
    names = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    counts: dict[str, int] = {}
    with open(args.out, "w", encoding="utf-8") as f:
        for i in range(args.count):
            # the first len(KINDS) conversations cover every kind, the rest are drawn
            kind = names[i] if i < len(names) else r.choices(names, weights)[0]
            msgs = conversation(r, kind)
            rec = {"id": "%s-%03d" % (kind, i), "kind": kind, "messages_count": len(msgs)}
            if enc is not None:
                total = sum(mend_tokens(enc, m) for m in msgs)
                rec["tokens"] = total
                rec["budget"] = int(total * r.uniform(0.30, 0.60))
            rec["body"] = {"model": "gpt-4o", "messages": msgs}
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            counts[kind] = counts.get(kind, 0) + 1
    print("wrote %d conversations to %s (%s)" % (
        args.count, args.out, ", ".join("%s %d" % kv for kv in sorted(counts.items()))), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

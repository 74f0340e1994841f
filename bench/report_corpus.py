#!/usr/bin/env python3
"""Generate the seeded correctness-and-speed corpus of `bench/report`.

Each conversation is made once in a neutral form (system, user, assistant turns with
optional reasoning, text and tool calls, and tool results), then either left valid or
damaged by one known rule, and rendered into every wire format a tool under test reads:

- `openai_chat`, `anthropic`, `gemini`, `openai_responses` request bodies (mend reads
  all four; LiteLLM reads `openai_chat`),
- the Vercel AI SDK's `ModelMessage[]` (what `generateText({messages})` takes).

The ground truth is how the sample was made, never a checker's verdict: `invalid_in`
lists the dialects whose provider rejects the rendering (see DAMAGE below; a damage
some dialect does not care about, such as a result placed after a user turn in the
Responses API, leaves that rendering valid).

One JSON line per sample:

    {"id", "damage": null | kind, "messages": N, "invalid_in": [...],
     "bodies": {dialect: body}, "aisdk": [ModelMessage...]}

Dialect-specific damage (reasoning without its follower, a lost `msg_` id, thinking not
first) is rendered only for its dialect.

Usage: report_corpus.py [--seed 11] [--valid 40] [--per-damage 16] [--out FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import random
import string

WORDS = (
    "the a of to in and for on with is are this that it as by from weather city forecast "
    "rain order invoice customer refund database query table index deploy build test "
    "failure error stack function module config file path branch commit review release "
    "latency token model request response retry timeout cache please could you check why"
).split()
TOOLS = ["get_weather", "search_docs", "read_file", "run_sql", "list_dir", "http_get"]
ALNUM = string.ascii_letters + string.digits
DIALECTS = ["openai_chat", "anthropic", "gemini", "openai_responses"]

# damage -> (dialects it is rendered for, dialects whose provider rejects it)
DAMAGE = {
    # a tool result whose call id no call has
    "orphan_result": (DIALECTS, DIALECTS),
    # one call of a round never answered
    "missing_result": (DIALECTS, DIALECTS),
    # a user turn between a call and its result (the Responses API does not mind)
    "result_not_adjacent": (DIALECTS, ["openai_chat", "anthropic", "gemini"]),
    # an assistant turn with calls, and its results, sent twice (same call ids); Gemini
    # without call ids matches by name and order, so it is rendered only where ids exist
    "duplicate_call": (["openai_chat", "anthropic", "openai_responses"],
                       ["openai_chat", "anthropic", "openai_responses"]),
    # one result sent twice
    "duplicate_result": (DIALECTS, DIALECTS),
    # a user turn with empty text: fine for OpenAI, rejected by Anthropic and Gemini
    "empty_text": (DIALECTS, ["anthropic", "gemini"]),
    # Responses: a reasoning item whose assistant message was dropped
    "reasoning_without_follower": (["openai_responses"], ["openai_responses"]),
    # Responses: the assistant message after a reasoning item lost its msg_ id
    "lost_msg_id": (["openai_responses"], ["openai_responses"]),
    # Anthropic, thinking on: the last assistant turn's thinking block after its tool_use
    "thinking_not_first": (["anthropic"], ["anthropic"]),
}


def sentence(r: random.Random, lo: int = 4, hi: int = 14) -> str:
    s = " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))
    return s[:1].upper() + s[1:] + "."


def rid(r: random.Random, n: int) -> str:
    return "".join(r.choice(ALNUM) for _ in range(n))


# ---------------------------------------------------------------- neutral conversations
# A turn is a dict: {"role": "system"|"user"|"assistant"|"tool", ...}
#   assistant: {"text": str|None, "reasoning": bool, "calls": [{"id", "name", "args"}],
#               "rs": "rs_..", "msg": "msg_..", "sig": "..."}
#   tool: {"call_id", "name", "output"}


def conversation(r: random.Random, rounds: int, reasoning: bool) -> list[dict]:
    turns: list[dict] = []
    if r.random() < 0.6:
        turns.append({"role": "system", "text": "You are a careful assistant. " + sentence(r)})
    for i in range(rounds):
        turns.append({"role": "user", "text": sentence(r, 6, 30)})
        for _ in range(r.randint(0, 3)):  # tool rounds
            calls = [{"id": "call_" + rid(r, 24), "name": r.choice(TOOLS),
                      "args": {"q": sentence(r, 2, 6), "n": r.randint(1, 99)}}
                     for _ in range(r.choice([1, 1, 1, 2, 3]))]
            turns.append(assistant(r, reasoning, calls, r.random() < 0.3))
            for c in calls:
                turns.append({"role": "tool", "call_id": c["id"], "name": c["name"],
                              "output": json.dumps({"ok": True, "data": sentence(r, 5, 40)})})
        turns.append(assistant(r, reasoning, [], True))
    # half of the conversations end inside a tool loop (the request after the results)
    if r.random() < 0.5:
        turns.append({"role": "user", "text": sentence(r)})
        calls = [{"id": "call_" + rid(r, 24), "name": r.choice(TOOLS),
                  "args": {"q": sentence(r, 2, 6), "n": r.randint(1, 99)}}]
        turns.append(assistant(r, reasoning, calls, False))
        turns.append({"role": "tool", "call_id": calls[0]["id"], "name": calls[0]["name"],
                      "output": json.dumps({"ok": True, "data": sentence(r)})})
    return turns


def assistant(r: random.Random, reasoning: bool, calls: list, text: bool) -> dict:
    return {"role": "assistant", "text": sentence(r, 5, 40) if text or not calls else None,
            "reasoning": reasoning, "calls": calls, "rs": "rs_" + rid(r, 40),
            "msg": "msg_" + rid(r, 40), "fc": ["fc_" + rid(r, 40) for _ in calls],
            "thought": sentence(r, 6, 20), "sig": rid(r, 120)}


def call_turns(turns: list[dict]) -> list[int]:
    return [i for i, t in enumerate(turns) if t["role"] == "assistant" and t["calls"]]


def results_of(turns: list[dict], i: int) -> list[int]:
    ids = {c["id"] for c in turns[i]["calls"]}
    j, out = i + 1, []
    while j < len(turns) and turns[j]["role"] == "tool":
        if turns[j]["call_id"] in ids:
            out.append(j)
        j += 1
    return out


def damage(r: random.Random, turns: list[dict], kind: str) -> list[dict] | None:
    """Apply one damage; None when this conversation has nowhere to put it."""
    t = copy.deepcopy(turns)
    calls = call_turns(t)
    if kind == "orphan_result":
        if not calls:
            return None
        i = r.choice(calls)
        j = results_of(t, i)[-1]
        t.insert(j + 1, {"role": "tool", "call_id": "call_" + rid(r, 24), "name": "get_weather",
                         "output": "{\"ok\": true}"})
    elif kind == "missing_result":
        if not calls:
            return None
        i = r.choice(calls)
        del t[r.choice(results_of(t, i))]
    elif kind == "result_not_adjacent":
        if not calls:
            return None
        i = r.choice(calls)
        t.insert(i + 1, {"role": "user", "text": "Also: " + sentence(r)})
    elif kind == "duplicate_call":
        if not calls:
            return None
        i = r.choice(calls)
        block = [t[i]] + [t[j] for j in results_of(t, i)]
        end = i + len(block)
        t[end:end] = copy.deepcopy(block)
    elif kind == "duplicate_result":
        if not calls:
            return None
        j = r.choice(results_of(t, r.choice(calls)))
        t.insert(j + 1, copy.deepcopy(t[j]))
    elif kind == "empty_text":
        users = [i for i, x in enumerate(t) if x["role"] == "user"]
        t[r.choice(users)]["text"] = ""
    elif kind in ("reasoning_without_follower", "lost_msg_id"):
        # an assistant turn with reasoning and text, no calls
        cands = [i for i, x in enumerate(t) if x["role"] == "assistant" and x["reasoning"]
                 and not x["calls"] and x["text"]]
        if not cands:
            return None
        i = r.choice(cands)
        if kind == "reasoning_without_follower":
            t[i]["drop_follower"] = True
        else:
            t[i]["lose_msg_id"] = True
    elif kind == "thinking_not_first":
        # the last assistant turn must be a call turn of the final tool loop
        last = [i for i, x in enumerate(t) if x["role"] == "assistant"]
        if not last or not t[last[-1]]["calls"] or not t[last[-1]]["reasoning"]:
            return None
        t[last[-1]]["thinking_last"] = True
    else:
        raise ValueError(kind)
    return t


# ---------------------------------------------------------------- renderings
def render_openai_chat(turns: list[dict]) -> dict:
    msgs = []
    for t in turns:
        if t["role"] in ("system", "user"):
            msgs.append({"role": t["role"], "content": t["text"]})
        elif t["role"] == "assistant":
            m = {"role": "assistant", "content": t["text"]}
            if t["calls"]:
                m["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                    "name": c["name"], "arguments": json.dumps(c["args"])}} for c in t["calls"]]
            msgs.append(m)
        else:
            msgs.append({"role": "tool", "tool_call_id": t["call_id"], "content": t["output"]})
    return {"model": "gpt-4o", "messages": msgs, "tools": tool_defs_openai()}


def tool_defs_openai() -> list:
    return [{"type": "function", "function": {"name": n, "description": "Tool " + n,
             "parameters": {"type": "object", "properties": {"q": {"type": "string"},
                                                             "n": {"type": "integer"}}}}}
            for n in TOOLS]


def render_anthropic(turns: list[dict], reasoning: bool) -> dict:
    system = None
    msgs: list[dict] = []
    for t in turns:
        if t["role"] == "system":
            system = t["text"]
        elif t["role"] == "user":
            # a user turn right after tool results joins their message, after them
            block = {"type": "text", "text": t["text"]}
            if msgs and msgs[-1]["role"] == "user" and isinstance(msgs[-1]["content"], list):
                msgs[-1]["content"].append(block)
            else:
                msgs.append({"role": "user", "content": [block]})
        elif t["role"] == "assistant":
            content = []
            if t["reasoning"]:
                content.append({"type": "thinking", "thinking": t["thought"], "signature": t["sig"]})
            if t["text"]:
                content.append({"type": "text", "text": t["text"]})
            content += [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
                        for c in t["calls"]]
            if t.get("thinking_last"):
                content = content[1:] + content[:1]
            msgs.append({"role": "assistant", "content": content})
        else:
            block = {"type": "tool_result", "tool_use_id": t["call_id"], "content": t["output"]}
            if msgs and msgs[-1]["role"] == "user" and all(
                    b["type"] == "tool_result" for b in msgs[-1]["content"]):
                msgs[-1]["content"].append(block)
            else:
                msgs.append({"role": "user", "content": [block]})
    body = {"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": msgs,
            "tools": [{"name": n, "description": "Tool " + n, "input_schema": {
                "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}
                for n in TOOLS]}
    if system is not None:
        body["system"] = system
    if reasoning:
        body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
    return body


def render_gemini(turns: list[dict]) -> dict:
    system = None
    contents: list[dict] = []
    for t in turns:
        if t["role"] == "system":
            system = t["text"]
        elif t["role"] == "user":
            contents.append({"role": "user", "parts": [{"text": t["text"]}]})
        elif t["role"] == "assistant":
            parts = []
            if t["text"]:
                parts.append({"text": t["text"]})
            parts += [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in t["calls"]]
            contents.append({"role": "model", "parts": parts})
        else:
            part = {"functionResponse": {"name": t["name"], "response": json.loads(t["output"])}}
            if contents and contents[-1]["role"] == "user" and all(
                    "functionResponse" in p for p in contents[-1]["parts"]):
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part]})
    body = {"contents": contents, "tools": [{"functionDeclarations": [
        {"name": n, "description": "Tool " + n, "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}
        for n in TOOLS]}]}
    if system is not None:
        body["systemInstruction"] = {"parts": [{"text": system}]}
    return body


def render_responses(turns: list[dict]) -> dict:
    items: list[dict] = []
    for t in turns:
        if t["role"] in ("system", "user"):
            items.append({"type": "message", "role": t["role"], "content": t["text"]})
        elif t["role"] == "assistant":
            if t["reasoning"]:
                items.append({"type": "reasoning", "id": t["rs"], "summary": [],
                              "encrypted_content": "gAAAA" + t["sig"]})
            if t["text"] and not t.get("drop_follower"):
                m = {"type": "message", "role": "assistant", "id": t["msg"], "status": "completed",
                     "content": [{"type": "output_text", "text": t["text"], "annotations": []}]}
                if t.get("lose_msg_id"):
                    del m["id"]
                items.append(m)
            for c, fc in zip(t["calls"], t["fc"]):
                items.append({"type": "function_call", "id": fc, "call_id": c["id"],
                              "name": c["name"], "arguments": json.dumps(c["args"])})
        else:
            items.append({"type": "function_call_output", "call_id": t["call_id"],
                          "output": t["output"]})
    return {"model": "o4-mini", "input": items, "store": False,
            "include": ["reasoning.encrypted_content"],
            "tools": [{"type": "function", "name": n, "description": "Tool " + n, "parameters": {
                "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}}}}
                for n in TOOLS]}


def render_aisdk(turns: list[dict]) -> list[dict]:
    """The AI SDK's ModelMessage[]: results of one round in one tool message."""
    msgs: list[dict] = []
    for t in turns:
        if t["role"] in ("system", "user"):
            msgs.append({"role": t["role"], "content": t["text"]})
        elif t["role"] == "assistant":
            content = []
            if t["text"]:
                content.append({"type": "text", "text": t["text"]})
            content += [{"type": "tool-call", "toolCallId": c["id"], "toolName": c["name"],
                         "input": c["args"]} for c in t["calls"]]
            msgs.append({"role": "assistant", "content": content})
        else:
            part = {"type": "tool-result", "toolCallId": t["call_id"], "toolName": t["name"],
                    "output": {"type": "text", "value": t["output"]}}
            if msgs and msgs[-1]["role"] == "tool":
                msgs[-1]["content"].append(part)
            else:
                msgs.append({"role": "tool", "content": [part]})
    return msgs


def render(turns: list[dict], reasoning: bool, dialects: list[str]) -> dict:
    out = {}
    for d in dialects:
        if d == "openai_chat":
            out[d] = render_openai_chat(turns)
        elif d == "anthropic":
            out[d] = render_anthropic(turns, reasoning)
        elif d == "gemini":
            out[d] = render_gemini(turns)
        else:
            out[d] = render_responses(turns)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--valid", type=int, default=40)
    ap.add_argument("--per-damage", type=int, default=16)
    ap.add_argument("--out", default="bench/corpus/report.jsonl")
    a = ap.parse_args()
    r = random.Random(a.seed)
    lines = []

    def base(n: int) -> tuple[list[dict], bool]:
        # sizes from a short chat to a long agent run; reasoning in about half
        return conversation(r, r.choice([1, 2, 4, 8, 16]), n % 2 == 0), n % 2 == 0

    for n in range(a.valid):
        turns, reasoning = base(n)
        lines.append({"id": "valid-%03d" % n, "damage": None, "messages": len(turns),
                      "invalid_in": [], "bodies": render(turns, reasoning, DIALECTS),
                      "aisdk": render_aisdk(turns)})
    for kind, (rendered, invalid) in DAMAGE.items():
        made = tries = 0
        while made < a.per_damage and tries < a.per_damage * 50:
            tries += 1
            # the dialect-specific damages need reasoning turns
            need_reasoning = kind in ("reasoning_without_follower", "lost_msg_id", "thinking_not_first")
            turns, reasoning = base(made * 2 if need_reasoning else made + tries)
            bad = damage(r, turns, kind)
            if bad is None:
                continue
            line = {"id": "%s-%03d" % (kind, made), "damage": kind, "messages": len(bad),
                    "invalid_in": invalid, "bodies": render(bad, reasoning, rendered)}
            if rendered == DIALECTS:
                line["aisdk"] = render_aisdk(bad)
            lines.append(line)
            made += 1
    # bench/corpus is not in git: a fresh clone has no such folder yet.
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    with open(a.out, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

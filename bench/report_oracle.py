#!/usr/bin/env python3
"""An independent judge of request bodies for `bench/report`'s correctness tables.

Written from the providers' documented rules and error texts (the rule catalog of
DESIGN.md), not from mend's code, so that mend is judged by the same yardstick as its
peers. It covers what the corpus damages and what a converter can get wrong on the way:
pairing and adjacency of calls and results, duplicate ids, Anthropic's thinking order
and empty text, Gemini's function-response turns, the Responses API's reasoning
followers. It is validated against the corpus itself: every generated body must be
judged exactly as it was made (`bench/report` refuses to go on otherwise).

`judge(dialect, body) -> list[str]` returns the problems found, [] when valid, for the
dialects in `JUDGED` (the corpus renders no Bedrock Converse body, so conversions to
Converse are timed by `bench/report` and not judged).
"""

from __future__ import annotations

import json
import sys


JUDGED = frozenset({"openai_chat", "anthropic", "gemini", "openai_responses"})


def judge(dialect: str, body: object) -> list[str]:
    if not isinstance(body, dict):
        return ["not an object"]
    try:
        return {"openai_chat": _chat, "anthropic": _anthropic, "gemini": _gemini,
                "openai_responses": _responses}[dialect](body)
    except (KeyError, TypeError, AttributeError, ValueError) as e:
        return ["malformed: %r" % e]


def _chat(body: dict) -> list[str]:
    p: list[str] = []
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        return ["no messages"]
    seen_calls: set = set()
    answered: set = set()
    pending: set = set()
    prev_role = None
    for i, m in enumerate(msgs):
        role = m.get("role")
        if role == "tool":
            cid = m.get("tool_call_id")
            if prev_role not in ("assistant_calls", "tool"):
                p.append("%d: tool message not right after an assistant message with tool_calls" % i)
            if cid in pending:
                pending.discard(cid)
                answered.add(cid)
            elif cid in answered:
                p.append("%d: tool result answered twice" % i)
            else:
                p.append("%d: tool result answers no preceding call" % i)
            prev_role = "tool"
            continue
        if pending:
            p.append("%d: tool calls %s not followed by their results" % (i, sorted(pending)))
            pending = set()
        if role == "assistant":
            calls = m.get("tool_calls") or []
            if not calls and m.get("content") in (None, [],):
                p.append("%d: assistant message with neither content nor tool_calls" % i)
            for c in calls:
                cid = c.get("id")
                if not cid or cid in seen_calls:
                    p.append("%d: duplicate or missing tool call id %r" % (i, cid))
                seen_calls.add(cid)
                pending.add(cid)
            prev_role = "assistant_calls" if calls else "assistant"
        elif role in ("system", "developer", "user"):
            prev_role = role
        else:
            p.append("%d: unknown role %r" % (i, role))
    if pending:
        p.append("end: tool calls %s without results" % sorted(pending))
    return p


def _blocks(m: dict) -> list:
    c = m.get("content")
    if isinstance(c, str):
        return [{"type": "text", "text": c}]
    return c if isinstance(c, list) else []


def _anthropic(body: dict) -> list[str]:
    p: list[str] = []
    raw = body.get("messages")
    if not isinstance(raw, list) or not raw:
        return ["no messages"]
    # the API combines consecutive turns of one role
    msgs: list[tuple[str, list]] = []
    for m in raw:
        role = m.get("role")
        if role not in ("user", "assistant"):
            p.append("role %r in messages" % role)
            continue
        bl = _blocks(m)
        if not bl:
            p.append("a message with empty content")
        if msgs and msgs[-1][0] == role:
            msgs[-1][1].extend(bl)
        else:
            msgs.append((role, list(bl)))
    if msgs and msgs[0][0] != "user":
        p.append("first message is not a user message")
    thinking_on = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
    seen: set = set()
    for i, (role, bl) in enumerate(msgs):
        for b in bl:
            if b.get("type") == "text" and not str(b.get("text", "")).strip():
                p.append("%d: empty text block" % i)
            if b.get("type") == "thinking" and not b.get("signature"):
                p.append("%d: thinking block without signature" % i)
        if role == "assistant":
            kinds = [b.get("type") for b in bl]
            first_other = next((k for k, t in enumerate(kinds)
                                if t not in ("thinking", "redacted_thinking")), len(kinds))
            if any(t in ("thinking", "redacted_thinking") for t in kinds[first_other:]):
                p.append("%d: thinking block after other content" % i)
            ids = [b.get("id") for b in bl if b.get("type") == "tool_use"]
            for cid in ids:
                if cid in seen:
                    p.append("%d: duplicate tool_use id" % i)
                seen.add(cid)
            if ids:
                nxt = msgs[i + 1][1] if i + 1 < len(msgs) else None
                if nxt is None:
                    p.append("%d: tool_use at the end of the request" % i)
                    continue
                lead = []
                for b in nxt:
                    if b.get("type") != "tool_result":
                        break
                    lead.append(b.get("tool_use_id"))
                if sorted(lead) != sorted(set(ids)) or len(lead) != len(ids):
                    p.append("%d: tool_use ids without tool_result blocks immediately after" % i)
                if (thinking_on and i + 2 == len(msgs) and kinds
                        and kinds[0] not in ("thinking", "redacted_thinking")):
                    p.append("%d: thinking on, last tool-loop turn does not start with thinking" % i)
        else:
            prev_ids = []
            if i > 0:
                prev_ids = [b.get("id") for b in msgs[i - 1][1] if b.get("type") == "tool_use"]
            results = [b.get("tool_use_id") for b in bl if b.get("type") == "tool_result"]
            extra = [r for r in results if r not in prev_ids]
            if extra or len(results) != len(set(results)):
                p.append("%d: unexpected or repeated tool_use_id in tool_result blocks" % i)
    return p


def _gemini(body: dict) -> list[str]:
    p: list[str] = []
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        return ["no contents"]
    prev = None  # "user", "response", "model", "call"
    pending_names: list = []
    for i, c in enumerate(contents):
        role = c.get("role", "user")
        parts = c.get("parts")
        if not isinstance(parts, list) or not parts:
            p.append("%d: content without parts" % i)
            parts = []
        for part in parts:
            if "text" in part and not str(part["text"]).strip() and not part.get("thought"):
                p.append("%d: empty text part" % i)
        calls = [part["functionCall"].get("name") for part in parts if "functionCall" in part]
        resps = [part["functionResponse"].get("name") for part in parts if "functionResponse" in part]
        if pending_names and sorted(resps) != sorted(pending_names):
            p.append("%d: function response parts do not match the call turn's %d calls"
                     % (i, len(pending_names)))
        elif resps and not pending_names:
            p.append("%d: function response turn not right after a function call turn" % i)
        if role == "model":
            if calls and prev not in ("user", "response"):
                p.append("%d: function call turn not after a user or function response turn" % i)
            pending_names = calls
            prev = "call" if calls else "model"
        elif role == "user":
            pending_names = []
            prev = "response" if resps else "user"
        else:
            p.append("%d: role %r" % (i, role))
    if pending_names:
        p.append("end: function calls without responses")
    return p


def _responses(body: dict) -> list[str]:
    p: list[str] = []
    items = body.get("input")
    if isinstance(items, str):
        return []
    if not isinstance(items, list) or not items:
        return ["no input"]
    calls: dict = {}
    answered: set = set()
    ids: set = set()
    for i, it in enumerate(items):
        t = it.get("type", "message")
        iid = it.get("id")
        if iid is not None:
            if iid in ids:
                p.append("%d: duplicate item id %s" % (i, iid))
            ids.add(iid)
        if t == "reasoning":
            nxt = items[i + 1] if i + 1 < len(items) else None
            nt = nxt.get("type", "message") if nxt else None
            if nxt is None or not (nt == "function_call" or (
                    nt == "message" and nxt.get("role") == "assistant")):
                p.append("%d: reasoning item without its required following item" % i)
            elif nt == "message" and not str(nxt.get("id", "")).startswith("msg_"):
                p.append("%d: the reasoning item's follower lost its msg_ id" % i)
        elif t == "function_call":
            cid = it.get("call_id")
            if cid in calls:
                p.append("%d: duplicate call_id %s" % (i, cid))
            calls[cid] = i
        elif t == "function_call_output":
            cid = it.get("call_id")
            if cid not in calls:
                p.append("%d: no tool call found for function call output %s" % (i, cid))
            elif cid in answered:
                p.append("%d: function call output answered twice" % i)
            answered.add(cid)
    for cid in calls:
        if cid not in answered:
            p.append("no tool output found for function call %s" % cid)
    return p


def main() -> None:
    """`report_oracle.py CORPUS`: judge every generated body against its label."""
    bad = 0
    n = 0
    for line in open(sys.argv[1], encoding="utf-8"):
        s = json.loads(line)
        for d, body in s["bodies"].items():
            n += 1
            probs = judge(d, body)
            want_invalid = d in s["invalid_in"]
            if bool(probs) != want_invalid:
                bad += 1
                print("%s %s: made %s, judged %s" % (s["id"], d, "invalid" if want_invalid else "valid",
                                                     probs or "valid"))
    print("%d bodies, %d judged unlike they were made" % (n, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

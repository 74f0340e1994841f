"""The API on the shared fixtures (recorded provider traffic) and on damaged bodies."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import pytest

import mend

DIALECTS = ("openai_chat", "openai_responses", "anthropic", "gemini")


def accepted(shared: Path) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for d in DIALECTS:
        for req in sorted((shared / "fixtures" / d).glob("*/request.json")):
            out.append((req, json.loads((req.parent / "meta.json").read_text())))
    assert len(out) >= 135, f"expected the 135 accepted requests, found {len(out)}"
    return out


def test_every_accepted_request_checks_clean_and_repair_hands_it_back(shared: Path) -> None:
    flagged = []
    for req, meta in accepted(shared):
        dialect = req.parent.parent.name
        raw = req.read_bytes()
        body = json.loads(raw)
        for given in (body, raw, raw.decode()):
            report = mend.check(given, dialect=dialect, model=meta.get("model"))
            if report.violations or not report.valid or report.dialect != dialect:
                flagged.append(f"{req}: {report.violations}")
        fixed = mend.repair(body, dialect=dialect, model=meta.get("model"))
        assert fixed.valid and not fixed.changed and fixed.edits == []
        assert fixed.body is body, "a valid body comes back as the very object given"
        assert mend.repair(raw, dialect=dialect, model=meta.get("model")).body is raw
    assert flagged == [], "false positives:\n" + "\n".join(flagged)


def test_requests_rejected_for_their_history_are_flagged_with_their_rule(shared: Path) -> None:
    seen = 0
    for req in sorted((shared / "fixtures").glob("*/*/rejected-request.json")):
        meta = json.loads((req.parent / "meta.json").read_text())
        if meta.get("rejected_for") != "history":
            continue
        seen += 1
        with pytest.raises(mend.InvalidHistory) as e:
            mend.ensure_valid(req.read_bytes(), dialect=req.parent.parent.name, model=meta.get("model"))
        rules = {v.rule for v in e.value.report.violations}
        assert set(meta["expected_rules"]) <= rules, f"{req}: {rules}"
        assert str(e.value).startswith(f"the {req.parent.parent.name} history would be refused")
    assert seen == 2


def without_assistant_calls(body: dict[str, Any]) -> dict[str, Any] | None:
    """The chat body with its first assistant tool-call message removed: its results
    are orphans."""
    msgs = body["messages"]
    for i, m in enumerate(msgs):
        if m.get("role") == "assistant" and m.get("tool_calls"):
            damaged = copy.deepcopy(body)
            del damaged["messages"][i]
            return damaged
    return None


def test_orphan_results_in_recorded_chat_histories_are_repaired(shared: Path) -> None:
    repaired = 0
    for req, meta in accepted(shared):
        if req.parent.parent.name != "openai_chat":
            continue
        damaged = without_assistant_calls(json.loads(req.read_bytes()))
        if damaged is None:
            continue
        report = mend.check(damaged, model=meta.get("model"))
        assert not report.valid
        assert "tool-result-without-call" in {v.rule for v in report.violations}
        fixed = mend.repair(damaged, model=meta.get("model"))
        assert fixed.valid and fixed.changed, f"{req}: {fixed.unrepairable}"
        assert {e.rule for e in fixed.edits} == {"tool-result-without-call"}
        assert all(e.action == "drop" and e.path.startswith("/messages/") for e in fixed.edits)
        assert isinstance(fixed.body, dict) and fixed.body is not damaged
        tools = lambda b: sum(m.get("role") == "tool" for m in b["messages"])  # noqa: E731
        assert tools(fixed.body) == tools(damaged) - len(fixed.edits)
        assert mend.check(fixed.body, model=meta.get("model")).valid
        # Bytes in, the same repair out as bytes.
        as_bytes = mend.repair(json.dumps(damaged).encode(), model=meta.get("model"))
        assert isinstance(as_bytes.body, bytes) and json.loads(as_bytes.body) == fixed.body
        repaired += 1
    assert repaired >= 5


CALL = {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{}"}}


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages)}


def test_a_repaired_dict_holds_the_given_messages_it_kept_and_text_keeps_their_bytes() -> None:
    body = chat(
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "and?"},
    )
    body["temperature"] = {"nested": [1, 2]}
    fixed = mend.repair(body)
    assert fixed.changed and fixed.body is not body
    msgs, given = fixed.body["messages"], body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "user"]
    # The untouched messages and members are the very objects given (aliasing, as the
    # README says); the inserted result is new, and the given list is left as it was.
    assert msgs[0] is given[0] and msgs[1] is given[1] and msgs[3] is given[2]
    assert fixed.body["temperature"] is body["temperature"]
    assert msgs is not given and len(given) == 3
    assert mend.check(fixed.body).valid
    # Text in: the repaired text is the given text with the result spliced in, the
    # untouched messages byte for byte.
    text = json.dumps(body, indent=2)
    as_text = mend.repair(text)
    assert isinstance(as_text.body, str) and json.loads(as_text.body) == fixed.body
    assert json.dumps(given[2], indent=2).replace("\n", "\n    ") in as_text.body


def test_a_dict_crosses_exactly_whatever_its_keys() -> None:
    # The crossing reads each key object once: keys shared by many dicts, more distinct
    # keys than it remembers, and a str subclass must all come through as they are.
    class Key(str):
        pass

    extra = {f"x_{i}": i for i in range(100)}

    def call(i: int) -> dict[str, Any]:
        return {"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}

    assistant = {"role": "assistant", "content": None, "tool_calls": [call(1), call(2)], **extra,
                 Key("x_sub"): "kept"}
    body = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "hi"},
        assistant,
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]}
    fixed = mend.repair(body, missing_result="drop-call")
    from_text = mend.repair(json.dumps(body), missing_result="drop-call")
    assert fixed.changed and fixed.valid
    assert fixed.body == json.loads(from_text.body)
    rebuilt = fixed.body["messages"][1]
    assert rebuilt is not assistant, "the edited message is built from what crossed"
    assert rebuilt["x_sub"] == "kept" and all(rebuilt[k] == v for k, v in extra.items())
    assert [c["id"] for c in rebuilt["tool_calls"]] == ["call_1"]


def test_a_call_without_result_is_answered_or_dropped_as_asked() -> None:
    body = chat(
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "and?"},
    )
    v = mend.check(body).violations[0]
    assert (v.rule, v.severity, v.path) == ("tool-call-without-result", "error", "/messages/1/tool_calls/0")
    assert v.provider_error and "tool_call_id" in v.provider_error
    synthesized = mend.repair(body, synthesized_text="[interrupted]")
    assert synthesized.body["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "[interrupted]"}
    assert [(e.rule, e.action) for e in synthesized.edits] == [("tool-call-without-result", "insert")]
    dropped = mend.repair(body, missing_result="drop-call")
    assert dropped.valid and all("tool_calls" not in m for m in dropped.body["messages"])
    as_text = mend.repair(
        chat({"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_9", "content": "21 C"}),
        orphan_result="to-text",
    )
    assert as_text.valid and "21 C" in json.dumps(as_text.body)


def test_bad_input_says_where_and_why() -> None:
    with pytest.raises(mend.MendError) as e:
        mend.check(b'{"messages": [\n  {"role": "user",')
    assert (e.value.line, e.value.column) == (2, 18) and e.value.reason.startswith("truncated JSON")
    assert isinstance(e.value, ValueError)
    with pytest.raises(mend.MendError, match="invalid UTF-8"):
        mend.check(b'{"messages": ["\xff"]}')
    with pytest.raises(mend.MendError) as e:
        mend.repair({"messages": [{"role": "user", "content": {1, 2}}]})
    assert e.value.path == "/messages/0/content" and "set" in e.value.reason
    with pytest.raises(mend.MendError, match="/messages/0/content: the float NaN, which JSON cannot write"):
        mend.check({"messages": [{"role": "user", "content": float("nan")}]})
    with pytest.raises(mend.MendError, match="dict key is int"):
        mend.check({"messages": [{1: "user"}]})
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(mend.MendError, match="nested more than 128"):
        mend.check({"messages": looped})
    with pytest.raises(TypeError, match="dict, str or bytes, not int"):
        mend.check(42)  # type: ignore[arg-type]
    with pytest.raises(mend.MendError, match="none of the keys that hold a history"):
        mend.check({"model": "gpt-4o"})
    with pytest.raises(mend.MendError, match="unknown dialect 'klingon'"):
        mend.check(chat(), dialect="klingon")
    with pytest.raises(mend.MendError, match="unknown provider 'nobody'"):
        mend.check(chat({"role": "user", "content": "hi"}), provider="nobody")
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with pytest.raises(mend.MendError, match="reads as gemini, not as openai_chat"):
        mend.repair(gemini, dialect="openai_chat")
    with pytest.raises(mend.MendError, match="missing_result: unknown policy 'guess'"):
        mend.repair(gemini, missing_result="guess")  # type: ignore[arg-type]


def long_chat(turns: int) -> dict[str, Any]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    for i in range(turns):
        call = {**CALL, "id": f"call_{i}"}
        msgs += [
            {"role": "user", "content": f"question {i} " + "words " * 50},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "result " * 40},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    return chat(*msgs)


def test_trim_fits_the_budget_without_cutting_a_group() -> None:
    body = long_chat(20)
    t = mend.trim(body, 1000, keep_last=2)
    assert t.tokens_before > 1000 >= t.tokens_after and not t.over_budget
    assert t.valid and t.counter == "o200k_base" and t.dropped
    assert all(d.kind in ("group", "turn") and d.tokens > 0 for d in t.dropped)
    assert t.body["messages"][0] == {"role": "system", "content": "be brief"}
    assert mend.check(t.body).valid
    raw = json.dumps(body).encode()
    assert json.loads(mend.trim(raw, 1000, keep_last=2).body) == t.body
    assert mend.trim(body, 10**6).body is body  # nothing to drop: the very object


def test_convert_carries_the_history_and_says_what_it_lost(shared: Path) -> None:
    converted = 0
    for req, _meta in accepted(shared):
        if req.parent.parent.name != "openai_responses":
            continue
        c = mend.convert(json.loads(req.read_bytes()), "anthropic", source="openai_responses")
        assert c.source == "openai_responses" and c.dialect == "anthropic"
        assert c.valid, f"{req}: {c.violations}"
        assert mend.check(c.body, dialect="anthropic").valid
        assert all(n.kind == "lost" for n in c.losses) and set(map(id, c.losses)) != {0}
        converted += 1
    assert converted >= 30
    tool = chat(
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"},
    )
    gemini = mend.convert(json.dumps(tool), "gemini")
    assert isinstance(gemini.body, str)
    assert json.loads(gemini.body)["contents"][2]["parts"][0]["functionResponse"]["name"] == "weather"
    with pytest.raises(mend.MendError, match="unknown dialect"):
        mend.convert(tool, "cobol")


def test_next_request_appends_the_response_and_the_results(shared: Path) -> None:
    request = chat({"role": "user", "content": "weather?"})
    response = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [CALL]}}],
    }
    nxt = mend.next_request(request, response, tool_results={"call_1": "sunny"})
    assert nxt["messages"][1]["tool_calls"][0]["id"] == "call_1"
    assert nxt["messages"][2] == {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    assert mend.check(nxt).valid
    listed = mend.next_request(request, json.dumps(response), tool_results=[{"call_id": "call_1", "output": "sunny"}])
    assert listed == nxt
    with pytest.raises(mend.MendError, match="answers call id \"call_2\""):
        mend.next_request(request, response, tool_results={"call_2": "x"})
    with pytest.raises(mend.MendError, match="tool_results/0: a result without `output`"):
        mend.next_request(request, response, tool_results=[{"call_id": "call_1", "result": "x"}])
    with pytest.raises(mend.MendError, match="tool_results/0/result: unknown key `result`") as e:
        mend.next_request(request, response, tool_results=[{"call_id": "call_1", "output": "x", "result": "x"}])
    assert e.value.path == "/0/result"
    # A recorded stream: the request of the first interaction and its SSE response give
    # a body that checks clean once its calls are answered.
    streams = 0
    for sse in sorted((shared / "fixtures").glob("*/*-01/response.sse")):
        req = sse.parent / "request.json"
        if not req.exists():
            continue
        body = json.loads(req.read_bytes())
        nxt_body = mend.next_request(body, sse.read_text())
        assert len(json.dumps(nxt_body)) > len(json.dumps(body))
        streams += 1
    assert streams >= 3


def test_rules_is_the_catalog() -> None:
    rules = mend.rules()
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids)) >= 20
    for r in rules:
        assert r.severity in ("error", "warning") and r.repair in ("always", "sometimes", "never")
        assert r.dialects and r.doc and r.summary
        if r.id != "malformed":
            assert r.id in {v.rule for v in mend.check(r.example).violations}, r.id


def test_threads_share_the_library() -> None:
    """The GIL is released while the library works on bytes: threads run side by side
    and each gets its own answer."""
    raw = json.dumps(long_chat(200)).encode()
    results: list[int] = []

    def work() -> None:
        for _ in range(5):
            results.append(mend.trim(raw, 2000).tokens_after)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 20 and len(set(results)) == 1 and results[0] <= 2000

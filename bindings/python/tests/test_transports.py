"""The drop-in transports with the real SDKs (``openai``, ``anthropic``, ``google-genai``
from PyPI) against a mock upstream on 127.0.0.1, asserting the body that arrived."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anthropic
import httpx2
import openai
import pytest
from google import genai
from google.genai import types as genai_types

import mend
import mend.httpx
from conftest import Upstream

ORPHAN_CHAT: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a travel assistant."},
    {"role": "user", "content": "Weather in Lisbon?"},
    {"role": "assistant", "content": "Let me check."},
    {"role": "tool", "tool_call_id": "call_7Gq2x", "content": "21 C, sunny"},
    {"role": "user", "content": "And tomorrow?"},
]
REPAIRED_CHAT = ORPHAN_CHAT[:3] + ORPHAN_CHAT[4:]

ORPHAN_ANTHROPIC: list[dict[str, Any]] = [
    {"role": "user", "content": "Weather in Lisbon?"},
    {"role": "assistant", "content": "Let me check."},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_01Orphan", "content": "21 C"},
            {"type": "text", "text": "And tomorrow?"},
        ],
    },
]
REPAIRED_ANTHROPIC = ORPHAN_ANTHROPIC[:2] + [{"role": "user", "content": [{"type": "text", "text": "And tomorrow?"}]}]


def openai_client(upstream: Upstream, mode: str) -> openai.OpenAI:
    http = httpx2.Client(transport=mend.httpx.Transport(mode=mode))  # type: ignore[arg-type]
    return openai.OpenAI(api_key="sk-test", base_url=upstream.url + "/v1", http_client=http)


def anthropic_client(upstream: Upstream, mode: str) -> anthropic.Anthropic:
    http = httpx2.Client(transport=mend.httpx.Transport(mode=mode))  # type: ignore[arg-type]
    return anthropic.Anthropic(api_key="sk-ant-test", base_url=upstream.url, http_client=http)


def test_openai_repair_sends_the_history_without_its_orphan_result(upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mend")
    client = openai_client(upstream, "repair")
    done = client.chat.completions.create(model="gpt-4o", messages=ORPHAN_CHAT)  # type: ignore[arg-type]
    assert done.choices[0].message.content == "ok"
    assert upstream.bodies() == [{"model": "gpt-4o", "messages": REPAIRED_CHAT}]
    said = [r.getMessage() for r in caplog.records if r.name == "mend"]
    assert len(said) == 1 and "repaired tool-result-without-call: drop at /messages/3" in said[0]
    assert said[0].startswith("mend: POST /v1/chat/completions (openai_chat)")


def test_openai_streaming_request_is_repaired_and_streams_back(upstream: Upstream) -> None:
    client = openai_client(upstream, "repair")
    stream = client.chat.completions.create(model="gpt-4o", messages=ORPHAN_CHAT, stream=True)  # type: ignore[arg-type]
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "ok"
    assert upstream.bodies() == [{"model": "gpt-4o", "messages": REPAIRED_CHAT, "stream": True}]


def test_openai_strict_raises_before_anything_is_sent(upstream: Upstream) -> None:
    client = openai_client(upstream, "strict")
    with pytest.raises(mend.InvalidHistory) as e:
        client.chat.completions.create(model="gpt-4o", messages=ORPHAN_CHAT)  # type: ignore[arg-type]
    assert [v.rule for v in e.value.report.violations] == ["tool-result-without-call"]
    assert e.value.report.violations[0].path == "/messages/3"
    assert upstream.requests == []
    # A valid history goes through strict untouched.
    client.chat.completions.create(model="gpt-4o", messages=REPAIRED_CHAT)  # type: ignore[arg-type]
    assert upstream.bodies() == [{"model": "gpt-4o", "messages": REPAIRED_CHAT}]


def test_observe_sends_as_it_is_and_warns(upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    client = openai_client(upstream, "observe")
    client.chat.completions.create(model="gpt-4o", messages=ORPHAN_CHAT)  # type: ignore[arg-type]
    assert upstream.bodies() == [{"model": "gpt-4o", "messages": ORPHAN_CHAT}]
    warned = [r for r in caplog.records if r.name == "mend" and r.levelno == logging.WARNING]
    assert len(warned) == 1 and "error[tool-result-without-call] at /messages/3" in warned[0].getMessage()


def test_other_endpoints_pass_through(upstream: Upstream) -> None:
    client = openai_client(upstream, "strict")
    client.models.list()
    assert [(r["method"], r["path"]) for r in upstream.requests] == [("GET", "/v1/models")]


def test_anthropic_repair_and_stream(upstream: Upstream) -> None:
    client = anthropic_client(upstream, "repair")
    msg = client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=ORPHAN_ANTHROPIC)  # type: ignore[arg-type]
    assert msg.content[0].text == "ok"  # type: ignore[union-attr]
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=ORPHAN_ANTHROPIC) as s:  # type: ignore[arg-type]
        assert s.get_final_text() == "ok"
    expected = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": REPAIRED_ANTHROPIC}
    assert upstream.bodies() == [expected, {**expected, "stream": True}]


def test_anthropic_strict_raises_at_once_without_retries(upstream: Upstream, caplog: pytest.LogCaptureFixture) -> None:
    client = anthropic_client(upstream, "strict")
    with pytest.raises(mend.InvalidHistory) as e:
        client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=ORPHAN_ANTHROPIC)  # type: ignore[arg-type]
    # Raised as the SDK's own error too, so the SDK neither wraps nor retries it.
    assert isinstance(e.value, anthropic.AnthropicError)
    assert e.value.report.dialect == "anthropic"
    assert upstream.requests == []
    refused = [r for r in caplog.records if r.name == "mend" and "refused, not sent" in r.getMessage()]
    assert len(refused) == 1


def test_async_openai_streaming_repair(upstream: Upstream) -> None:
    async def run() -> str:
        http = httpx2.AsyncClient(transport=mend.httpx.AsyncTransport(mode="repair"))  # type: ignore[arg-type]
        client = openai.AsyncOpenAI(api_key="sk-test", base_url=upstream.url + "/v1", http_client=http)
        stream = await client.chat.completions.create(model="gpt-4o", messages=ORPHAN_CHAT, stream=True)  # type: ignore[arg-type]
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        await client.close()
        return text

    assert asyncio.run(run()) == "ok"
    assert upstream.bodies() == [{"model": "gpt-4o", "messages": REPAIRED_CHAT, "stream": True}]


def test_async_anthropic_strict(upstream: Upstream) -> None:
    async def run() -> None:
        http = httpx2.AsyncClient(transport=mend.httpx.AsyncTransport(mode="strict"))  # type: ignore[arg-type]
        client = anthropic.AsyncAnthropic(api_key="sk-ant-test", base_url=upstream.url, http_client=http)
        await client.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=ORPHAN_ANTHROPIC)  # type: ignore[arg-type]

    with pytest.raises(mend.InvalidHistory):
        asyncio.run(run())
    assert upstream.requests == []


ORPHAN_GEMINI = [
    {"role": "user", "parts": [{"text": "Weather in Lisbon?"}]},
    {"role": "model", "parts": [{"text": "Let me check."}]},
    {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"result": "21 C"}}}, {"text": "And tomorrow?"}]},
]


def genai_client(upstream: Upstream, mode: str) -> genai.Client:
    http = httpx2.Client(transport=mend.httpx.Transport(mode=mode))  # type: ignore[arg-type]
    options = genai_types.HttpOptions(base_url=upstream.url, httpx_client=http)  # type: ignore[arg-type]
    return genai.Client(api_key="AIza-test", http_options=options)


def test_google_genai_repair_and_stream(upstream: Upstream) -> None:
    client = genai_client(upstream, "repair")
    contents: Any = ORPHAN_GEMINI
    done = client.models.generate_content(model="gemini-2.5-flash", contents=contents)
    assert done.text == "ok"
    streamed = "".join(c.text or "" for c in client.models.generate_content_stream(model="gemini-2.5-flash", contents=contents))
    assert streamed == "ok"
    paths = [r["path"].split("?")[0].split("/models/")[1] for r in upstream.requests]
    assert paths == ["gemini-2.5-flash:generateContent", "gemini-2.5-flash:streamGenerateContent"]
    repaired = ORPHAN_GEMINI[:2] + [{"role": "user", "parts": [{"text": "And tomorrow?"}]}]
    assert [b["contents"] for b in upstream.bodies()] == [repaired, repaired]


def test_google_genai_strict(upstream: Upstream) -> None:
    client = genai_client(upstream, "strict")
    contents: Any = ORPHAN_GEMINI
    with pytest.raises(mend.InvalidHistory) as e:
        client.models.generate_content(model="gemini-2.5-flash", contents=contents)
    assert e.value.report.dialect == "gemini"
    assert upstream.requests == []


def test_a_bad_mode_is_refused_at_once() -> None:
    with pytest.raises(mend.MendError, match="unknown mode 'fix'"):
        mend.httpx.Transport(mode="fix")  # type: ignore[arg-type]
    with pytest.raises(mend.MendError, match="orphan_result: unknown policy"):
        mend.httpx.AsyncTransport(orphan_result="keep")

"""Shared pieces of the binding's tests: the shared fixtures folder and a mock upstream.

The fixtures are read from ``MEND_SHARED`` (or ``../shared`` beside the clone). Without
them a fixture test skips with the reason, except under ``CI=true``, where it fails.
"""

from __future__ import annotations

import json
import os
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest

REPO = Path(__file__).resolve().parents[3]


def shared_dir() -> Path:
    root = Path(os.environ.get("MEND_SHARED", REPO.parent / "shared"))
    fixtures = root / "fixtures"
    if not (fixtures.is_dir() and any(fixtures.iterdir())):
        why = f"no shared fixtures at {fixtures} (set MEND_SHARED)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{why}, and CI=true: the fixture tests must run in CI")
        pytest.skip(why)
    return root


@pytest.fixture(scope="session")
def shared() -> Path:
    return shared_dir()


class Upstream:
    """A provider on 127.0.0.1 that records each request and answers it in the shape of
    the endpoint's dialect, streamed when the body asks for it."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def do_GET(self) -> None:
                upstream.requests.append({"method": "GET", "path": self.path, "body": b""})
                self._send(200, "application/json", b'{"object": "list", "data": []}')

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                upstream.requests.append({"method": "POST", "path": self.path, "body": body})
                streamed = json.loads(body).get("stream") is True or "alt=sse" in self.path
                kind, payload = answer(self.path, streamed)
                self._send(200, kind, payload)

            def _send(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def bodies(self) -> list[Any]:
        return [json.loads(r["body"]) for r in self.requests if r["method"] == "POST"]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def sse(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    out = b""
    for name, data in events:
        if name:
            out += f"event: {name}\n".encode()
        out += b"data: " + json.dumps(data).encode() + b"\n\n"
    if done:
        out += b"data: [DONE]\n\n"
    return out


def answer(path: str, streamed: bool) -> tuple[str, bytes]:
    if path.endswith("/chat/completions"):
        if streamed:
            chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
            return "text/event-stream", sse(
                [
                    (None, {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}]}),
                    (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                ],
                done=True,
            )
        return "application/json", json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-4o",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
    if path.endswith("/messages"):
        message = {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-6",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        if streamed:
            return "text/event-stream", sse(
                [
                    ("message_start", {"type": "message_start", "message": message}),
                    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
                    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 1}}),
                    ("message_stop", {"type": "message_stop"}),
                ]
            )
        done = {**message, "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}
        return "application/json", json.dumps(done).encode()
    if ":generateContent" in path or ":streamGenerateContent" in path:
        reply = {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
            "modelVersion": "gemini-2.5-flash",
        }
        if streamed:
            return "text/event-stream", b"data: " + json.dumps(reply).encode() + b"\r\n\r\n"
        return "application/json", json.dumps(reply).encode()
    return "application/json", b'{"error": {"message": "no such endpoint in the mock"}}'


@pytest.fixture()
def upstream() -> Iterator[Upstream]:
    u = Upstream()
    yield u
    u.close()

"""Type-checked by mypy --strict in the test run (not a pytest module): the stubs must
describe the API as a user writes against it."""

from __future__ import annotations

import httpx2

import mend
import mend.httpx

body: dict[str, object] = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
report: mend.Report = mend.check(body, provider="openai")
valid: bool = report.valid and not report.violations
paths: list[str] = [v.path for v in report.violations if v.severity == "error"]
fixed = mend.repair(b"{}", missing_result="drop-call", orphan_result="to-text")
edits: list[tuple[str, str, str, str]] = [(e.rule, e.path, e.action, e.detail) for e in fixed.edits]
trimmed = mend.trim(body, 1000, keep_last=2, protect=1, model="gpt-4o")
saved: int = trimmed.tokens_before - trimmed.tokens_after
dropped: list[str] = [p for d in trimmed.dropped for p in d.paths]
conversion = mend.convert(body, "anthropic", max_tokens=1024)
lost: list[str] = [f"{n.what} at {n.path}: {n.detail}" for n in conversion.losses]
nxt: dict[str, object] = mend.next_request(body, "{}", tool_results={"call_1": "sunny"})
ids: list[str] = [r.id for r in mend.rules()]
try:
    mend.ensure_valid(body)
except mend.InvalidHistory as e:
    again: mend.Report = e.report
except mend.MendError as e:
    reason: str = e.reason
client = httpx2.Client(transport=mend.httpx.Transport(mode="strict"))
aclient = httpx2.AsyncClient(transport=mend.httpx.AsyncTransport("observe", provider="openai"))

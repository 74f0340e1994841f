"""mend keeps LLM conversation histories valid for every provider API.

A Rust core with a small Python API: ``check`` finds what the provider would refuse
(each finding with its rule, JSON pointer and the provider's own error text), ``repair``
makes the fewest edits that fix it, ``trim`` fits a token budget without cutting a tool
call from its result, ``convert`` moves a conversation to another dialect, and
``next_request`` builds the next request from a response. Bodies are given as a ``dict``,
``str`` or ``bytes`` and come back in the same type.

``mend.httpx.Transport`` (and ``AsyncTransport``) check or repair every request an
``httpx``-based SDK (``openai``, ``anthropic``, ``google-genai``) sends, in-process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._mend import (
    Conversion,
    Dropped,
    Edit,
    InvalidHistory,
    MendError,
    Note,
    ProviderText,
    Repair,
    Report,
    Rule,
    Trim,
    Violation,
    __version__,
    check,
    convert,
    ensure_valid,
    next_request,
    repair,
    rules,
    trim,
)

if TYPE_CHECKING:
    from . import httpx as httpx

__all__ = [
    "Conversion",
    "Dropped",
    "Edit",
    "InvalidHistory",
    "MendError",
    "Note",
    "ProviderText",
    "Repair",
    "Report",
    "Rule",
    "Trim",
    "Violation",
    "__version__",
    "check",
    "convert",
    "ensure_valid",
    "next_request",
    "repair",
    "rules",
    "trim",
]


def __getattr__(name: str) -> Any:
    # `mend.httpx` needs httpx, which the core does not: imported on first use.
    if name == "httpx":
        import importlib

        return importlib.import_module(".httpx", __name__)
    raise AttributeError(f"module 'mend' has no attribute {name!r}")

"""Drop-in ``httpx`` transports: the gateway's behaviour without a gateway.

Every request an ``httpx``-based SDK sends to a history endpoint (OpenAI
``/chat/completions`` and ``/responses``, Anthropic ``/messages``, Gemini
``:generateContent`` / ``:streamGenerateContent``, Bedrock ``/model/{id}/converse``) is
checked in-process before it leaves, the dialect told from the URL path:

- ``observe``: sent as it is; what the provider would refuse is logged (warning);
- ``repair``: sent repaired; each edit is logged (info), what could not be repaired
  without guessing is logged (warning) and sent as it is;
- ``strict``: a history the provider would refuse raises :class:`mend.InvalidHistory`
  (carrying ``.report``) before anything is sent; a body mend cannot read raises
  :class:`mend.MendError`.

Other requests (model lists, files, embeddings) pass through untouched, as do the
responses, streamed ones included. Logs go to the ``logging`` logger ``mend``.

The transports work with ``httpx2`` (what the current ``openai``, ``anthropic`` and
``google-genai`` SDKs are built on) and with classic ``httpx``: they subclass the
``BaseTransport`` of each that is installed, and a request is rebuilt, and by default
sent, with the library it came from.

    import httpx2, openai, mend.httpx
    client = openai.OpenAI(http_client=httpx2.Client(transport=mend.httpx.Transport(mode="repair")))
"""

from __future__ import annotations

import importlib
import logging
import sys
from typing import Any, Literal, Optional

from . import _mend
from ._mend import MendError

__all__ = ["AsyncTransport", "MissingResult", "Mode", "OrphanResult", "Transport"]

Mode = Literal["observe", "repair", "strict"]
MissingResult = Literal["synthesize", "drop-call"]
OrphanResult = Literal["drop", "to-text"]
_MODES = ("observe", "repair", "strict")

logger = logging.getLogger("mend")


def _http_libraries() -> list[Any]:
    found: list[Any] = []
    for name in ("httpx2", "httpx"):
        try:
            lib = importlib.import_module(name)
        except ImportError:
            continue
        # httpx2.alias_httpx() makes `httpx` the same module.
        if all(lib is not f for f in found):
            found.append(lib)
    if not found:
        raise ImportError("mend.httpx needs httpx2 or httpx: pip install httpx2")
    return found


_LIBRARIES = _http_libraries()
_SyncBase: Any = type("_SyncBase", tuple(lib.BaseTransport for lib in _LIBRARIES), {})
_AsyncBase: Any = type("_AsyncBase", tuple(lib.AsyncBaseTransport for lib in _LIBRARIES), {})


def _library_of(request: Any) -> Any:
    """The httpx flavour a request was made with."""
    return sys.modules[type(request).__module__.split(".")[0]]


# The SDKs whose clients wrap an exception from the transport in a retried "connection
# error" unless it is one of their own (anthropic does; openai passes on its own errors
# and any non-httpx one): a refusal is raised as an instance of theirs too, so that it
# reaches the caller at once, as itself.
_SDK_ERRORS = (("anthropic", "AnthropicError"), ("openai", "OpenAIError"))
_sdk_classes: dict[tuple[type, ...], type] = {}


def _as_sdk_error(err: MendError) -> MendError:
    """``err`` as an instance of its own class and of the loaded SDKs' base errors."""
    bases: list[type] = []
    for module, name in _SDK_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            bases.append(cls)
    if not bases:
        return err
    key = (type(err), *bases)
    cls = _sdk_classes.get(key)
    if cls is None:
        cls = type(type(err).__name__, key, {"__module__": "mend"})
        _sdk_classes[key] = cls
    raised: MendError = cls(*err.args)
    raised.__dict__.update(err.__dict__)
    return raised


class _Policy:
    """What to do with one request body; shared by the sync and async transports."""

    def __init__(
        self,
        mode: str,
        provider: Optional[str],
        missing_result: MissingResult,
        orphan_result: OrphanResult,
        synthesized_text: Optional[str],
    ) -> None:
        if mode not in _MODES:
            raise MendError(f"mode: unknown mode {mode!r} (expected one of {', '.join(_MODES)})")
        self.mode = mode
        self.provider = provider
        self.missing_result = missing_result
        self.orphan_result = orphan_result
        self.synthesized_text = synthesized_text
        # Refuse a bad policy now rather than on the first request.
        if missing_result.replace("_", "-") not in ("synthesize", "drop-call"):
            raise MendError(
                f"missing_result: unknown policy {missing_result!r} (expected 'synthesize' or 'drop-call')"
            )
        if orphan_result.replace("_", "-") not in ("drop", "to-text"):
            raise MendError(
                f"orphan_result: unknown policy {orphan_result!r} (expected 'drop' or 'to-text')"
            )

    def wants(self, request: Any) -> bool:
        return (
            request.method == "POST"
            and "content-encoding" not in request.headers
            and _mend._endpoint_dialect(request.url.path) is not None
        )

    def apply(self, request: Any) -> Any:
        """The request to send instead (the same one when nothing changes)."""
        path = request.url.path
        where = f"{request.method} {path}"
        body = request.content
        if self.mode == "strict":
            # Raises InvalidHistory, or MendError for a body that is no request of the
            # endpoint's dialect: strict never sends what it cannot check.
            try:
                _mend.ensure_valid(body, endpoint=path, provider=self.provider)
            except MendError as e:
                logger.warning("mend: %s refused, not sent: %s", where, e)
                raise _as_sdk_error(e) from None
            return request
        try:
            if self.mode == "observe":
                report = _mend.check(body, endpoint=path, provider=self.provider)
                for v in report.violations:
                    logger.warning(
                        "mend: %s (%s) %s[%s] at %s: %s",
                        where, report.dialect, v.severity, v.rule, v.path or "/", v.message,
                    )
                return request
            fixed = _mend.repair(
                body,
                endpoint=path,
                provider=self.provider,
                missing_result=self.missing_result,
                orphan_result=self.orphan_result,
                synthesized_text=self.synthesized_text,
            )
        except MendError as e:
            logger.warning("mend: %s not checked, sent as it is: %s", where, e)
            return request
        for edit in fixed.edits:
            logger.info(
                "mend: %s (%s) repaired %s: %s at %s: %s",
                where, fixed.dialect, edit.rule, edit.action, edit.path or "/", edit.detail,
            )
        for v in fixed.unrepairable:
            logger.warning(
                "mend: %s (%s) cannot repair %s at %s without guessing: %s",
                where, fixed.dialect, v.rule, v.path or "/", v.message,
            )
        if not fixed.changed:
            return request
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        return type(request)(
            request.method,
            request.url,
            headers=headers,
            content=fixed.body,
            extensions=request.extensions,
        )


class Transport(_SyncBase):  # type: ignore[misc]
    """An ``httpx`` transport that checks or repairs history requests, then hands them
    to ``wrapped`` (when not given, a plain ``HTTPTransport()`` of the request's own
    library, made on first use)."""

    def __init__(
        self,
        mode: Mode = "repair",
        wrapped: Optional[Any] = None,
        *,
        provider: Optional[str] = None,
        missing_result: MissingResult = "synthesize",
        orphan_result: OrphanResult = "drop",
        synthesized_text: Optional[str] = None,
    ) -> None:
        self._policy = _Policy(mode, provider, missing_result, orphan_result, synthesized_text)
        self._wrapped = wrapped

    @property
    def mode(self) -> str:
        return self._policy.mode

    def handle_request(self, request: Any) -> Any:
        if self._policy.wants(request):
            request.read()
            request = self._policy.apply(request)
        if self._wrapped is None:
            self._wrapped = _library_of(request).HTTPTransport()
        return self._wrapped.handle_request(request)

    def close(self) -> None:
        if self._wrapped is not None:
            self._wrapped.close()


class AsyncTransport(_AsyncBase):  # type: ignore[misc]
    """The async twin of :class:`Transport`, for ``AsyncClient`` (``AsyncOpenAI``,
    ``AsyncAnthropic``, ``google-genai``'s ``client.aio``)."""

    def __init__(
        self,
        mode: Mode = "repair",
        wrapped: Optional[Any] = None,
        *,
        provider: Optional[str] = None,
        missing_result: MissingResult = "synthesize",
        orphan_result: OrphanResult = "drop",
        synthesized_text: Optional[str] = None,
    ) -> None:
        self._policy = _Policy(mode, provider, missing_result, orphan_result, synthesized_text)
        self._wrapped = wrapped

    @property
    def mode(self) -> str:
        return self._policy.mode

    async def handle_async_request(self, request: Any) -> Any:
        if self._policy.wants(request):
            await request.aread()
            request = self._policy.apply(request)
        if self._wrapped is None:
            self._wrapped = _library_of(request).AsyncHTTPTransport()
        return await self._wrapped.handle_async_request(request)

    async def aclose(self) -> None:
        if self._wrapped is not None:
            await self._wrapped.aclose()

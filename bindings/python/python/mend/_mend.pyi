"""Type stubs of the native module; everything is re-exported by ``mend``."""

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Optional, TypeVar, Union

__version__: str

Body = TypeVar("Body", dict[str, Any], str, bytes)
Dialect = Literal["openai_chat", "openai_responses", "anthropic", "gemini", "bedrock_converse"]
MissingResult = Literal["synthesize", "drop-call"]
OrphanResult = Literal["drop", "to-text"]

class MendError(ValueError):
    """Bad input: ``reason`` says why; ``line``/``column`` (text) or ``path`` (a JSON
    pointer) where, when known."""

    reason: str
    line: int
    column: int
    path: str

class InvalidHistory(MendError):
    """The provider would refuse the history; ``report`` is the check's."""

    report: Report

class Violation:
    @property
    def rule(self) -> str: ...
    @property
    def severity(self) -> Literal["error", "warning"]: ...
    @property
    def path(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def provider_error(self) -> Optional[str]: ...

class Report:
    @property
    def valid(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def provider(self) -> str: ...
    @property
    def violations(self) -> list[Violation]: ...
    def __bool__(self) -> bool: ...

class Edit:
    @property
    def rule(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def action(self) -> str: ...
    @property
    def detail(self) -> str: ...

class Repair:
    @property
    def body(self) -> Any: ...
    @property
    def valid(self) -> bool: ...
    @property
    def changed(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def provider(self) -> str: ...
    @property
    def edits(self) -> list[Edit]: ...
    @property
    def unrepairable(self) -> list[Violation]: ...
    @property
    def warnings(self) -> list[Violation]: ...

class Dropped:
    @property
    def paths(self) -> list[str]: ...
    @property
    def kind(self) -> Literal["group", "turn"]: ...
    @property
    def tokens(self) -> int: ...

class Trim:
    @property
    def body(self) -> Any: ...
    @property
    def valid(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def counter(self) -> Literal["o200k_base", "cl100k_base", "estimate_chars_over4"]: ...
    @property
    def tokens_before(self) -> int: ...
    @property
    def tokens_after(self) -> int: ...
    @property
    def over_budget(self) -> bool: ...
    @property
    def dropped(self) -> list[Dropped]: ...
    @property
    def repairs(self) -> list[Edit]: ...
    @property
    def violations(self) -> list[Violation]: ...

class Note:
    @property
    def kind(self) -> Literal["lost", "added", "moved", "changed", "missing"]: ...
    @property
    def what(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def detail(self) -> str: ...

class Conversion:
    @property
    def body(self) -> Any: ...
    @property
    def valid(self) -> bool: ...
    @property
    def source(self) -> Dialect: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def provider(self) -> str: ...
    @property
    def model(self) -> Optional[str]: ...
    @property
    def losses(self) -> list[Note]: ...
    @property
    def notes(self) -> list[Note]: ...
    @property
    def edits(self) -> list[Edit]: ...
    @property
    def violations(self) -> list[Violation]: ...

class ProviderText:
    @property
    def provider(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def source(self) -> str: ...

class Rule:
    @property
    def id(self) -> str: ...
    @property
    def summary(self) -> str: ...
    @property
    def dialects(self) -> list[Dialect]: ...
    @property
    def profiles(self) -> list[str]: ...
    @property
    def severity(self) -> Literal["error", "warning"]: ...
    @property
    def repair(self) -> Literal["always", "sometimes", "never"]: ...
    @property
    def repair_how(self) -> str: ...
    @property
    def provider_texts(self) -> list[ProviderText]: ...
    @property
    def doc(self) -> str: ...
    @property
    def example(self) -> str: ...

def check(
    body: Union[Mapping[str, Any], str, bytes],
    *,
    dialect: Optional[str] = None,
    provider: Optional[str] = None,
    model: Optional[str] = None,
    endpoint: Optional[str] = None,
) -> Report: ...
def ensure_valid(
    body: Union[Mapping[str, Any], str, bytes],
    *,
    dialect: Optional[str] = None,
    provider: Optional[str] = None,
    model: Optional[str] = None,
    endpoint: Optional[str] = None,
) -> Report: ...
def repair(
    body: Union[dict[str, Any], str, bytes],
    *,
    missing_result: MissingResult = "synthesize",
    orphan_result: OrphanResult = "drop",
    synthesized_text: Optional[str] = None,
    dialect: Optional[str] = None,
    provider: Optional[str] = None,
    model: Optional[str] = None,
    endpoint: Optional[str] = None,
) -> Repair: ...
def trim(
    body: Union[dict[str, Any], str, bytes],
    budget: int,
    *,
    keep_last: int = 1,
    protect: int = 0,
    model: Optional[str] = None,
    dialect: Optional[str] = None,
    provider: Optional[str] = None,
) -> Trim: ...
def convert(
    body: Union[dict[str, Any], str, bytes],
    to: str,
    *,
    source: Optional[str] = None,
    provider: Optional[str] = None,
    model: Optional[str] = None,
    source_provider: Optional[str] = None,
    source_model: Optional[str] = None,
    max_tokens: Optional[int] = None,
    missing_result: MissingResult = "synthesize",
    orphan_result: OrphanResult = "drop",
    repair: bool = True,
    force: bool = False,
) -> Conversion: ...
def next_request(
    request: Body,
    response: Union[dict[str, Any], str, bytes],
    *,
    tool_results: Optional[Union[Mapping[str, Any], Sequence[Mapping[str, Any]]]] = None,
    user: Optional[str] = None,
    choice: int = 0,
    dialect: Optional[str] = None,
    provider: Optional[str] = None,
    model: Optional[str] = None,
) -> Body: ...
def rules() -> list[Rule]: ...
def _endpoint_dialect(path: str) -> Optional[Dialect]: ...

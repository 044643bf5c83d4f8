"""Provider-neutral chat types shared by agents, the judge, enrichment and dataset benchmarks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolSpec:
    """A tool offered to the model. ``parameters`` is a full JSON Schema object, never emptied."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any] | None  # None when the model's arguments were not valid JSON
    raw_arguments: str = ""


@dataclass
class Message:
    """One conversation message.

    assistant messages may carry ``tool_calls``; a ``tool`` message answers one call by
    ``tool_call_id`` (``is_error`` marks a failed tool).
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    is_error: bool = False


@dataclass
class ChatRequest:
    messages: list[Message]
    model: str
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    max_tokens: int = 4096
    temperature: float | None = 0.0
    timeout_s: float = 120.0
    # Nucleus sampling and stop sequences (None: the API's defaults).
    top_p: float | None = None
    stop: list[str] | None = None
    # Ask the API to cache the prompt prefix (Anthropic bills cache writes at 1.25x input, so
    # one-shot calls such as a judge's may turn it off; a tool loop gains from it).
    prompt_cache: bool = True


@dataclass
class Usage:
    """Tokens of one call. ``input_tokens`` counts input billed at the full price (cache reads
    and cache writes are counted apart, as Anthropic reports them; for OpenAI the cached part
    of ``prompt_tokens`` is moved to ``cache_read_tokens``)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )


@dataclass
class ChatResponse:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    model: str
    stop_reason: str | None
    latency_ms: float
    cost_usd: float | None  # None when the model has no price in the table
    # Replayed from the disk cache: nothing was sent. ``cost_usd``, ``usage`` and ``latency_ms``
    # are then those of the original call.
    cached: bool = False
    # Streamed calls only (Provider.chat_stream): ms from sending the request to the first
    # token of the answer; None when the call was not streamed or the answer had no token.
    ttft_ms: float | None = None


# ProviderError kinds that are the provider's (or the machine's) failure, never the caller's:
# a run that ends on one is stored as error/infra, not as the agent's error.
INFRA_KINDS = frozenset({"unavailable", "auth"})


class ProviderError(RuntimeError):
    """A model call failed after retries, or could not be made (e.g. missing credentials).

    ``kind`` says which side failed: ``unavailable`` (no answer: HTTP 5xx, 429, 408 or 409
    after the retries, a timeout or a connection error), ``auth`` (credentials missing or
    refused: 401, 403), ``refused`` (the API refused this request: another 4xx, such as a
    context too long), ``error`` (anything else). ``status`` is the last HTTP status, if any.
    For ``unavailable``, ``reason`` says what happened (``timeout``, ``connection`` or ``status``)
    and ``retry_after`` the seconds the server asked to wait (Retry-After), when it did;
    ``network``, for a transport failure, what the transport found: ``connect`` (no connection
    could be opened: refused, unreachable), ``dns`` (the host name not resolved), ``timeout``
    or ``connection`` (a connection that broke). :func:`harness.models.providers.failures.error_class`
    reads them as one class.
    """

    def __init__(self, message: str = "", *, kind: str = "error", status: int | None = None,
                 reason: str | None = None, retry_after: float | None = None,
                 network: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.reason = reason
        self.retry_after = retry_after
        self.network = network

    @property
    def infrastructure(self) -> bool:
        """True when the failure is the provider's or the machine's, not the request's."""
        return self.kind in INFRA_KINDS


class MissingCredentialsError(ProviderError):
    def __init__(self, env_var: str, provider: str) -> None:
        super().__init__(f"{provider}: no credentials; set the environment variable {env_var}", kind="auth")
        self.env_var = env_var
        self.provider = provider

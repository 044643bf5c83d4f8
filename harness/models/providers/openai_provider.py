"""OpenAI chat completions through the official ``openai`` SDK, with function tools.

The same code serves OpenAI itself, OpenRouter (OpenAI-compatible, its own base URL and key)
and any OpenAI-compatible server (Ollama, vLLM, llama.cpp) given a ``base_url``.
"""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from harness.models.providers.base import Provider, sdk_errors
from harness.models.providers.base import answer_field as _get
from harness.models.providers.types import ChatRequest, ChatResponse, Message, MissingCredentialsError, ProviderError, ToolCall, Usage

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

# Reasoning models accept only the default temperature and count output in max_completion_tokens.
_REASONING_MODEL = re.compile(r"^(openai/)?(o\d|gpt-5)")


class OpenAIProvider(Provider):
    name = "openai"
    env_var: str | None = "OPENAI_API_KEY"
    key_required = True
    supports_streaming = True

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if self.env_var:
            self.api_key = self.api_key or os.environ.get(self.env_var)
        if not self.api_key:
            if self.key_required:
                raise MissingCredentialsError(self.env_var or "", self.name)
            self.api_key = "not-needed"  # local servers ignore the key, but the SDK wants one

    def _client(self) -> Any:
        if self._sdk is None:
            import openai

            kwargs = self._sdk_client_kwargs()
            kwargs.update(self._extra_client_kwargs())
            self._sdk = openai.OpenAI(**kwargs)
        return self._sdk

    def _extra_client_kwargs(self) -> dict[str, Any]:
        return {}

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request``."""
        messages: list[dict[str, Any]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages.extend(_message(m) for m in request.messages)
        params: dict[str, Any] = {"model": request.model, "messages": messages}
        reasoning = bool(_REASONING_MODEL.match(request.model))
        if self.name == "openai":
            params["max_completion_tokens"] = request.max_tokens
        else:
            params["max_tokens"] = request.max_tokens  # what compatible servers understand
        if request.temperature is not None and not (reasoning and self.name == "openai"):
            params["temperature"] = request.temperature
        if request.top_p is not None:
            params["top_p"] = request.top_p
        if request.stop:
            params["stop"] = list(request.stop)
        if request.tools:
            params["tools"] = [
                {
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
                }
                for t in request.tools
            ]
        return params

    def _send(self, request: ChatRequest) -> ChatResponse:
        import openai

        client = self._client()
        with sdk_errors(self.name, openai):
            completion = client.chat.completions.create(**self.build_params(request), timeout=request.timeout_s)
        return _parse(completion, request.model, self.name)

    def _stream_params(self, request: ChatRequest) -> dict[str, Any]:
        """:meth:`build_params` of a streamed call (``stream_options.include_usage`` asks for the
        usage in the last chunk)."""
        params = self.build_params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        return params

    # -- asynchronous ---------------------------------------------------------------------------
    def _new_async_sdk(self) -> Any:
        import openai

        kwargs = self._sdk_async_client_kwargs()
        kwargs.update(self._extra_client_kwargs())
        return openai.AsyncOpenAI(**kwargs)

    async def _asend(self, request: ChatRequest) -> ChatResponse:
        """One call through the SDK's own ``post``: its base URL, headers, key, timeout and
        errors, without building typed request and response objects (which would cost more CPU
        than the rest of the call); the JSON answer is read as a dict."""
        import httpx2
        import openai

        client = self._aclient()
        with sdk_errors(self.name, openai):
            raw = await client.post(self._async_url(client, "/chat/completions"), body=self.build_params(request), cast_to=httpx2.Response,
                                    options={"timeout": request.timeout_s})
        return _parse(_json_body(raw, self.name), request.model, self.name)

    async def _asend_stream(self, request: ChatRequest) -> ChatResponse:
        """One streamed call on the event loop; the first content, tool call or reasoning chunk
        is the first token."""
        import openai

        client = self._aclient()
        params = self._stream_params(request)
        state = _StreamState()
        with sdk_errors(self.name, openai):
            state.started = time.monotonic()
            stream = await client.chat.completions.create(**params, timeout=request.timeout_s)
            try:
                async for chunk in stream:
                    state.feed(chunk)
            finally:
                await stream.close()
        return state.response(request.model)


class _StreamState:
    """What the chunks of a streamed completion add up to: text, tool calls, usage, and when
    the first token came (content, a tool call or reasoning, whichever is first)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.first: float | None = None
        self.texts: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.usage: Any = None
        self.model = ""
        self.finish: str | None = None

    def feed(self, chunk: Any) -> None:
        self.model = getattr(chunk, "model", None) or self.model
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        for choice in chunk.choices or []:
            if choice.index != 0 or choice.delta is None:
                continue
            delta = choice.delta
            reasoning = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
            if delta.content or delta.tool_calls or reasoning:
                self.first = self.first or time.monotonic()
            if delta.content:
                self.texts.append(delta.content)
            for tc in delta.tool_calls or []:
                slot = self.calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = tc.id or slot["id"]
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            self.finish = choice.finish_reason or self.finish

    def response(self, requested_model: str) -> ChatResponse:
        tool_calls = [
            ToolCall(id=c["id"] or f"call_{i}", name=c["name"], arguments=parse_arguments(c["arguments"]),
                     raw_arguments=c["arguments"])
            for i, c in sorted(self.calls.items())
        ]
        return ChatResponse(
            text="".join(self.texts),
            tool_calls=tool_calls,
            usage=_usage(self.usage),
            model=self.model or requested_model,
            stop_reason=self.finish,
            latency_ms=0.0,
            cost_usd=None,
            ttft_ms=None if self.first is None else (self.first - self.started) * 1000.0,
        )


class OpenRouterProvider(OpenAIProvider):
    name = "openrouter"
    env_var = "OPENROUTER_API_KEY"

    def __init__(self, **kwargs: Any) -> None:
        kwargs["base_url"] = kwargs.get("base_url") or OPENROUTER_BASE_URL
        super().__init__(**kwargs)

    def _extra_client_kwargs(self) -> dict[str, Any]:
        # OpenRouter's attribution headers; harmless elsewhere.
        return {"default_headers": {"X-Title": "zebench"}}


class OpenAICompatibleProvider(OpenAIProvider):
    """Any server speaking OpenAI's chat completions. The key is optional and only the one passed in is
    sent: an OpenAI key from the environment is never handed to an arbitrary server."""

    name = "openai-compatible"
    env_var = None
    key_required = False

    def __init__(self, **kwargs: Any) -> None:
        if not kwargs.get("base_url"):
            raise ProviderError("openai-compatible: a base_url is required (e.g. http://127.0.0.1:11434/v1)")
        super().__init__(**kwargs)

    def _extra_client_kwargs(self) -> dict[str, Any]:
        # The SDK's platform headers (OS, architecture, Python and SDK versions) are telemetry
        # for OpenAI: another server is not told them (and each request is cheaper to build).
        import openai

        return {"default_headers": dict.fromkeys(SDK_PLATFORM_HEADERS, openai.Omit())}


# What the openai SDK sends with every request to describe the machine it runs on.
SDK_PLATFORM_HEADERS = ("X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-OS", "X-Stainless-Arch",
                        "X-Stainless-Runtime", "X-Stainless-Runtime-Version", "X-Stainless-Async")


def _message(msg: Message) -> dict[str, Any]:
    if msg.role == "tool":
        content = msg.content or "(no output)"
        if msg.is_error:
            content = f"ERROR: {content}"  # chat completions has no error flag on tool results
        return {"role": "tool", "tool_call_id": msg.tool_call_id or "", "content": content}
    if msg.role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": msg.content or None}
        if msg.tool_calls:
            out["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.raw_arguments or json.dumps(c.arguments or {}),
                    },
                }
                for c in msg.tool_calls
            ]
        elif not msg.content:
            out["content"] = ""
        return out
    return {"role": msg.role, "content": msg.content}


def parse_arguments(raw: str | None) -> dict[str, Any] | None:
    """Tool-call arguments as a dict, or None when they are not a JSON object."""
    if raw is None or raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _json_body(raw: Any, provider: str) -> dict[str, Any]:
    """The JSON object of a raw HTTP answer (a ProviderError when it is not one)."""
    try:
        data = json.loads(raw.content)
    except ValueError as exc:
        raise ProviderError(f"{provider}: the answer was not JSON: {raw.content[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ProviderError(f"{provider}: the answer was not a JSON object")
    return data


def _parse(completion: Any, requested_model: str, provider: str) -> ChatResponse:
    """A completion (the SDK's object, or the JSON dict of the same answer) as a ChatResponse."""
    choices = _get(completion, "choices")
    if not choices:
        raise ProviderError(f"{provider}: response had no choices")
    choice = choices[0]
    message = _get(choice, "message") or {}
    calls: list[ToolCall] = []
    for i, tc in enumerate(_get(message, "tool_calls") or []):
        fn = _get(tc, "function")
        if fn is None:
            continue
        raw = _get(fn, "arguments") or ""
        calls.append(ToolCall(id=_get(tc, "id") or f"call_{i}", name=_get(fn, "name"), arguments=parse_arguments(raw),
                              raw_arguments=raw))
    return ChatResponse(
        text=_get(message, "content") or "",
        tool_calls=calls,
        usage=_usage(_get(completion, "usage")),
        model=_get(completion, "model") or requested_model,
        stop_reason=_get(choice, "finish_reason"),
        latency_ms=0.0,
        cost_usd=None,
    )


def _usage(usage: Any) -> Usage:
    """The normalised usage of a completion (zeros when the server reported none)."""
    if usage is None:
        return Usage()
    prompt = _get(usage, "prompt_tokens") or 0
    details = _get(usage, "prompt_tokens_details")
    cached = (_get(details, "cached_tokens") or 0) if details is not None else 0
    # Usage.input_tokens counts uncached input, as Anthropic reports it; cached reads apart.
    return Usage(
        input_tokens=max(0, prompt - cached),
        output_tokens=_get(usage, "completion_tokens") or 0,
        cache_read_tokens=cached,
        cache_write_tokens=0,
    )

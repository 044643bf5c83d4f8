"""Anthropic Messages API through the official ``anthropic`` SDK, with native tool use."""

from __future__ import annotations

import json
import os
import re
import time
from typing import Any

from harness.models.providers.base import Provider, sdk_errors
from harness.models.providers.base import answer_field as _get
from harness.models.providers.types import ChatRequest, ChatResponse, Message, ProviderError, ToolCall, Usage, MissingCredentialsError


# Models that still accept a sampling temperature. Models released after Claude Opus 4.6
# reject any non-default value, so for them (and for names we don't know) it is omitted.
_TEMPERATURE_MODELS = re.compile(r"^claude-(3-|3\.|(opus|sonnet|haiku)-4(-[0-5])?(-\d{8})?$|opus-4-6|sonnet-4-5|haiku-4-5)")


def accepts_temperature(model: str) -> bool:
    """True when ``model`` is known to take a ``temperature`` (older Claude models)."""
    return bool(_TEMPERATURE_MODELS.match(model.lower()))


class AnthropicProvider(Provider):
    name = "anthropic"
    env_var = "ANTHROPIC_API_KEY"
    sdk_module = "anthropic"
    supports_streaming = True

    def __init__(self, *, prompt_caching: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.api_key = self.api_key or os.environ.get(self.env_var)
        if not self.api_key:
            raise MissingCredentialsError(self.env_var, self.name)
        # Marks the stable prefix (system prompt, conversation so far) as cacheable, so a
        # tool loop pays the full input price for each turn's new messages only.
        self.prompt_caching = prompt_caching

    def _client(self) -> Any:
        if self._sdk is None:
            import anthropic

            kwargs = self._sdk_client_kwargs()
            self._sdk = anthropic.Anthropic(**kwargs)
        return self._sdk

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request``."""
        params: dict[str, Any] = {
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": _messages(request.messages, self.prompt_caching and request.prompt_cache),
        }
        if request.system:
            block: dict[str, Any] = {"type": "text", "text": request.system}
            if self.prompt_caching and request.prompt_cache:
                block["cache_control"] = {"type": "ephemeral"}
            params["system"] = [block]
        if request.top_p is not None:
            params["top_p"] = request.top_p
        if request.stop:
            params["stop_sequences"] = list(request.stop)
        if request.tools:
            params["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools
            ]
        if request.temperature is not None and accepts_temperature(request.model):
            # The SDK no longer has a temperature argument; the API still takes it from older models.
            params["extra_body"] = {"temperature": request.temperature}
        return params

    def _send(self, request: ChatRequest) -> ChatResponse:
        import anthropic

        client = self._client()
        with sdk_errors(self.name, anthropic):
            message = client.messages.create(**self.build_params(request), timeout=request.timeout_s)
        return _parse(message, request.model)

    # -- asynchronous ---------------------------------------------------------------------------
    def _new_async_sdk(self) -> Any:
        import anthropic

        return anthropic.AsyncAnthropic(**self._sdk_async_client_kwargs())

    async def _asend(self, request: ChatRequest) -> ChatResponse:
        """One call through the SDK's own ``post`` (its base URL, headers, key, timeout and
        errors), with the answer read as a JSON dict rather than typed objects, which would cost
        more CPU than the rest of the call."""
        import anthropic
        import httpx2

        client = self._aclient()
        body = self.build_params(request)
        body.update(body.pop("extra_body", None) or {})
        with sdk_errors(self.name, anthropic):
            raw = await client.post(self._async_url(client, "/v1/messages"), body=body, cast_to=httpx2.Response,
                                    options={"timeout": request.timeout_s})
        try:
            data = json.loads(raw.content)
        except ValueError as exc:
            raise ProviderError(f"anthropic: the answer was not JSON: {raw.content[:200]!r}") from exc
        return _parse(data, request.model)

    async def _asend_stream(self, request: ChatRequest) -> ChatResponse:
        """One streamed call on the event loop; the first ``content_block_delta`` event is the
        first token."""
        import anthropic

        client = self._aclient()
        first: float | None = None
        with sdk_errors(self.name, anthropic):
            params = self.build_params(request)
            started = time.monotonic()
            async with client.messages.stream(**params, timeout=request.timeout_s) as stream:
                async for event in stream:
                    if first is None and _is_token(event):
                        first = time.monotonic()
                message = await stream.get_final_message()
        response = _parse(message, request.model)
        response.ttft_ms = None if first is None else (first - started) * 1000.0
        return response


def _is_token(event: Any) -> bool:
    """True for a stream event that carries part of the answer (text, tool input, thinking)."""
    return getattr(event, "type", None) == "content_block_delta"


def _messages(messages: list[Message], prompt_caching: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for msg in messages:
        if msg.role == "system":
            continue  # the system prompt travels in ChatRequest.system
        if msg.role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": msg.tool_call_id or "",
                "content": msg.content or "(no output)",
            }
            if msg.is_error:
                block["is_error"] = True
            # Anthropic wants all results of one turn in a single user message.
            if out and out[-1]["role"] == "user" and _all_tool_results(out[-1]["content"]):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
            continue
        if msg.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if msg.content:
                blocks.append({"type": "text", "text": msg.content})
            for call in msg.tool_calls:
                blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments or {}})
            out.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no answer)"}]})
            continue
        out.append({"role": "user", "content": [{"type": "text", "text": msg.content or "(empty)"}]})
    if prompt_caching and out:
        last = out[-1]["content"][-1]
        last["cache_control"] = {"type": "ephemeral"}
    return out


def _all_tool_results(content: Any) -> bool:
    return isinstance(content, list) and bool(content) and all(b.get("type") == "tool_result" for b in content)


def _parse(message: Any, requested_model: str) -> ChatResponse:
    """A message (the SDK's object, or the JSON dict of the same answer) as a ChatResponse."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in _get(message, "content") or []:
        kind = _get(block, "type")
        if kind == "text":
            texts.append(_get(block, "text") or "")
        elif kind == "tool_use":
            value = _get(block, "input")
            args = value if isinstance(value, dict) else None
            calls.append(ToolCall(id=_get(block, "id"), name=_get(block, "name"), arguments=args,
                                  raw_arguments=json.dumps(value)))
    usage = _get(message, "usage")
    if usage is None:
        raise ProviderError("anthropic: response carried no usage")
    return ChatResponse(
        text="".join(texts),
        tool_calls=calls,
        usage=Usage(
            input_tokens=_get(usage, "input_tokens") or 0,
            output_tokens=_get(usage, "output_tokens") or 0,
            cache_read_tokens=_get(usage, "cache_read_input_tokens") or 0,
            cache_write_tokens=_get(usage, "cache_creation_input_tokens") or 0,
        ),
        model=_get(message, "model") or requested_model,
        stop_reason=_get(message, "stop_reason"),
        latency_ms=0.0,
        cost_usd=None,
    )

"""The four wire formats agent CLIs speak, read and written for a scripted model.

- OpenAI Chat Completions (``POST .../chat/completions``), plain JSON or streamed;
- OpenAI Responses (``POST .../responses``, as Codex uses it), streamed or plain;
- Anthropic Messages (``POST .../messages``), plain or streamed;
- Gemini (``POST .../models/M:generateContent`` and ``:streamGenerateContent?alt=sse``).

:func:`read_request` turns a request into a :class:`Request` (which API, the model, whether
it streams, how many answers the model gave before, the tools offered); the ``render_*``
functions turn an :class:`~harness.scripted.script.Answer` into the body the client expects,
either a JSON document or a list of server-sent events. Token counts are deterministic: a
quarter of the request's bytes in, 20 tokens out per answer.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from harness.scripted.script import Answer, Tool

OUTPUT_TOKENS = 20


@dataclass
class Request:
    api: str  # chat | responses | anthropic | gemini
    model: str
    stream: bool
    turn: int
    tools: list[Tool] = field(default_factory=list)
    input_tokens: int = 0
    include_usage: bool = False  # Chat Completions' stream_options.include_usage
    json_schema: dict[str, Any] | None = None  # the answer must be JSON of this schema (a router's question)
    system: str = ""  # the client's instructions (system messages), as text
    submit: bool = False  # the client ends a task with mini-swe-agent's submit command


class WireError(ValueError):
    """A request the scripted model cannot read."""


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value)
    if isinstance(value, dict):
        return _text(value.get("text") or value.get("content") or value.get("parts") or "")
    return ""


def _system_text(route: str, body: dict[str, Any]) -> str:
    if route.endswith("/chat/completions"):
        return _text([m.get("content") for m in body.get("messages") or []
                      if isinstance(m, dict) and m.get("role") in ("system", "developer")])
    if route.endswith("/responses"):
        return _text(body.get("instructions")) + _text([i.get("content") for i in body.get("input") or []
                                                         if isinstance(i, dict) and i.get("role") in ("system", "developer")])
    if route.endswith("/messages"):
        return _text(body.get("system"))
    return _text((body.get("systemInstruction") or {}).get("parts"))


def read_request(path: str, body: dict[str, Any], size: int) -> Request:
    """Which API ``path`` is and what ``body`` asks of it."""
    request = _read_request(path, body, size)
    request.system = _system_text(path.split("?", 1)[0].rstrip("/"), body)
    request.submit = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in json.dumps(body)
    return request


def _read_request(path: str, body: dict[str, Any], size: int) -> Request:
    route = path.split("?", 1)[0].rstrip("/")
    tokens = max(1, size // 4)
    if route.endswith("/chat/completions"):
        tools = [Tool(t["function"]["name"], t["function"].get("parameters") or {})
                 for t in body.get("tools") or [] if isinstance(t, dict) and isinstance(t.get("function"), dict)]
        turn = _turns([(m.get("role") == "assistant", bool(m.get("tool_calls")), m.get("role") == "user")
                       for m in body.get("messages") or [] if isinstance(m, dict)])
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("schema")
        return Request("chat", str(body.get("model") or ""), bool(body.get("stream")), turn, tools, tokens, usage,
                       schema if isinstance(schema, dict) else None)
    if route.endswith("/responses"):
        tools = []
        for t in body.get("tools") or []:
            if not isinstance(t, dict) or not t.get("name"):
                continue
            tools.append(Tool(t["name"], t.get("parameters") or {}, freeform=t.get("type") == "custom"))
        items = [i for i in (body.get("input") if isinstance(body.get("input"), list) else []) if isinstance(i, dict)]
        turn = _turns([(i.get("type") in _CALL_ITEMS or (i.get("type", "message") == "message"
                                                           and i.get("role") == "assistant"),
                        i.get("type") in _CALL_ITEMS,
                        i.get("type", "message") == "message" and i.get("role") == "user") for i in items])
        return Request("responses", str(body.get("model") or ""), bool(body.get("stream")), turn, tools, tokens)
    if route.endswith("/messages"):
        tools = [Tool(t["name"], t.get("input_schema") or {}) for t in body.get("tools") or []
                 if isinstance(t, dict) and t.get("name")]
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        turn = _turns([(m.get("role") == "assistant", _has_block(m, "tool_use"),
                        m.get("role") == "user" and not _only_blocks(m, "tool_result")) for m in messages])
        return Request("anthropic", str(body.get("model") or ""), bool(body.get("stream")), turn, tools, tokens)
    if ":generateContent" in route or ":streamGenerateContent" in route:
        model = route.rsplit("/models/", 1)[-1].split(":", 1)[0]
        tools = []
        for group in body.get("tools") or []:
            for decl in (group or {}).get("functionDeclarations") or []:
                schema = decl.get("parametersJsonSchema") or decl.get("parameters") or {}
                tools.append(Tool(decl.get("name", ""), schema))
        contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
        turn = _turns([(c.get("role") == "model", any("functionCall" in p for p in c.get("parts") or []),
                        c.get("role") == "user" and any("text" in p for p in c.get("parts") or []))
                       for c in contents])
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if not isinstance(schema, dict) and config.get("responseMimeType") == "application/json":
            schema = {"type": "object"}
        return Request("gemini", model, ":streamGenerateContent" in route, turn, tools, tokens,
                       json_schema=schema if isinstance(schema, dict) else None)
    raise WireError(f"no scripted API answers {route}")


_CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")


def _turns(messages: list[tuple[bool, bool, bool]]) -> int:
    """How many answers of the model a conversation holds, from (from the model, made a tool
    call, a user's words) per message: every answer with a tool call, and the answers with
    text alone after the user's last words. Text the client put in the model's mouth before
    the task (Qwen Code's and Gemini CLI's "Got it. Thanks for the context!") is no answer."""
    last_user = max((i for i, (_, _, user) in enumerate(messages) if user), default=-1)
    return sum(1 for i, (model, called, _) in enumerate(messages) if model and (called or i > last_user))


def _has_block(message: dict[str, Any], kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == kind for b in content)


def _only_blocks(message: dict[str, Any], kind: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and bool(content) and all(
        isinstance(b, dict) and b.get("type") == kind for b in content)


def _arguments_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# --------------------------------------------------------------------------- OpenAI Chat Completions


def render_chat(req: Request, answer: Answer, n: int) -> tuple[dict[str, Any] | None, list[bytes]]:
    created = int(time.time())
    calls = [{"id": f"call_{n}_{i}", "type": "function",
              "function": {"name": c.name, "arguments": _arguments_text(c.arguments)}}
             for i, c in enumerate(answer.calls)]
    finish = "tool_calls" if calls else "stop"
    usage = {"prompt_tokens": req.input_tokens, "completion_tokens": OUTPUT_TOKENS,
             "total_tokens": req.input_tokens + OUTPUT_TOKENS}
    if not req.stream:
        message: dict[str, Any] = {"role": "assistant", "content": answer.text or None}
        if calls:
            message["tool_calls"] = calls
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": created, "model": req.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}, []

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return _sse({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": created, "model": req.model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})

    events = [chunk({"role": "assistant", "content": ""})]
    if answer.text:
        events.append(chunk({"content": answer.text}))
    for i, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, **call}]}))
    events.append(chunk({}, finish))
    if req.include_usage:
        events.append(_sse({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": created,
                            "model": req.model, "choices": [], "usage": usage}))
    events.append(b"data: [DONE]\n\n")
    return None, events


# --------------------------------------------------------------------------- OpenAI Responses


def render_responses(req: Request, answer: Answer, n: int) -> tuple[dict[str, Any] | None, list[bytes]]:
    tools = {t.name: t for t in req.tools}
    items: list[dict[str, Any]] = []
    if answer.text:
        items.append({"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                      "content": [{"type": "output_text", "text": answer.text, "annotations": []}]})
    for i, call in enumerate(answer.calls):
        tool = tools.get(call.name)
        if tool is not None and tool.freeform:
            text = call.arguments if isinstance(call.arguments, str) else str(call.arguments.get("input", ""))
            items.append({"type": "custom_tool_call", "id": f"ctc_{n}_{i}", "call_id": f"call_{n}_{i}",
                          "name": call.name, "input": text, "status": "completed"})
        else:
            items.append({"type": "function_call", "id": f"fc_{n}_{i}", "call_id": f"call_{n}_{i}",
                          "name": call.name, "arguments": _arguments_text(call.arguments), "status": "completed"})
    usage = {"input_tokens": req.input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": OUTPUT_TOKENS, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": req.input_tokens + OUTPUT_TOKENS}
    response = {"id": f"resp_{n}", "object": "response", "created_at": int(time.time()), "status": "completed",
                "model": req.model, "output": items, "usage": usage, "error": None, "incomplete_details": None}
    if not req.stream:
        return response, []
    sequence = iter(range(10_000))

    def event(kind: str, data: dict[str, Any]) -> bytes:
        return _sse({"type": kind, "sequence_number": next(sequence), **data}, kind)

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    events = [event("response.created", {"response": pending}), event("response.in_progress", {"response": pending})]
    for index, item in enumerate(items):
        if item["type"] == "message":
            started = {**item, "status": "in_progress", "content": []}
            events.append(event("response.output_item.added", {"output_index": index, "item": started}))
            events.append(event("response.content_part.added", {"output_index": index, "item_id": item["id"],
                                                                 "content_index": 0,
                                                                 "part": {"type": "output_text", "text": "",
                                                                          "annotations": []}}))
            events.append(event("response.output_text.delta", {"output_index": index, "item_id": item["id"],
                                                                "content_index": 0, "delta": answer.text}))
            events.append(event("response.output_text.done", {"output_index": index, "item_id": item["id"],
                                                               "content_index": 0, "text": answer.text}))
            events.append(event("response.content_part.done", {"output_index": index, "item_id": item["id"],
                                                                "content_index": 0, "part": item["content"][0]}))
        else:
            events.append(event("response.output_item.added", {"output_index": index,
                                                                "item": {**item, "status": "in_progress"}}))
        events.append(event("response.output_item.done", {"output_index": index, "item": item}))
    events.append(event("response.completed", {"response": response}))
    return None, events


# --------------------------------------------------------------------------- Anthropic Messages


def render_anthropic(req: Request, answer: Answer, n: int) -> tuple[dict[str, Any] | None, list[bytes]]:
    content: list[dict[str, Any]] = [{"type": "text", "text": answer.text}] if answer.text else []
    content += [{"type": "tool_use", "id": f"toolu_{n}_{i}", "name": c.name,
                 "input": c.arguments if isinstance(c.arguments, dict) else {"input": c.arguments}}
                for i, c in enumerate(answer.calls)]
    stop = "tool_use" if answer.calls else "end_turn"
    usage = {"input_tokens": req.input_tokens, "output_tokens": OUTPUT_TOKENS, "cache_read_input_tokens": 0,
             "cache_creation_input_tokens": 0}
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": req.model, "content": content,
               "stop_reason": stop, "stop_sequence": None, "usage": usage}
    if not req.stream:
        return message, []
    events = [_sse({"type": "message_start", "message": {**message, "content": [], "stop_reason": None,
                                                         "usage": {**usage, "output_tokens": 1}}}, "message_start")]
    for index, block in enumerate(content):
        if block["type"] == "text":
            events.append(_sse({"type": "content_block_start", "index": index,
                                "content_block": {"type": "text", "text": ""}}, "content_block_start"))
            events.append(_sse({"type": "content_block_delta", "index": index,
                                "delta": {"type": "text_delta", "text": block["text"]}}, "content_block_delta"))
        else:
            events.append(_sse({"type": "content_block_start", "index": index,
                                "content_block": {**block, "input": {}}}, "content_block_start"))
            events.append(_sse({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}},
                               "content_block_delta"))
        events.append(_sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
    events.append(_sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": {"output_tokens": OUTPUT_TOKENS}}, "message_delta"))
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return None, events


# --------------------------------------------------------------------------- Gemini


def render_gemini(req: Request, answer: Answer, n: int) -> tuple[dict[str, Any] | None, list[bytes]]:
    parts: list[dict[str, Any]] = [{"text": answer.text}] if answer.text else []
    parts += [{"functionCall": {"name": c.name, "args": c.arguments if isinstance(c.arguments, dict)
                                else {"input": c.arguments}}} for c in answer.calls]
    body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": req.input_tokens, "candidatesTokenCount": OUTPUT_TOKENS,
                              "totalTokenCount": req.input_tokens + OUTPUT_TOKENS},
            "modelVersion": req.model, "responseId": f"resp_{n}"}
    if not req.stream:
        return body, []
    return None, [_sse(body)]


RENDERERS = {"chat": render_chat, "responses": render_responses, "anthropic": render_anthropic,
             "gemini": render_gemini}

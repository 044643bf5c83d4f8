"""A scripted model behind a respx route: the official SDKs and the real tool loop talk to it."""

from __future__ import annotations

import json

import httpx


class MockModel:
    """A scripted model behind a respx route, speaking Anthropic's or OpenAI's wire format.

    Step ``n`` answers the request that carries ``n`` assistant messages, so the script
    follows the conversation; each request body is kept for assertions.
    """

    def __init__(self, api: str, steps: list[tuple[str, list[tuple[str, dict]]]], model: str) -> None:
        self.api = api
        self.steps = steps
        self.model = model
        self.bodies: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        text, calls = self.steps[turn]
        if self.api == "anthropic":
            content = ([{"type": "text", "text": text}] if text else []) + [
                {"type": "tool_use", "id": f"toolu_{turn}_{i}", "name": name, "input": args}
                for i, (name, args) in enumerate(calls)
            ]
            return httpx.Response(
                200,
                json={
                    "id": f"msg_{turn}",
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": content,
                    "stop_reason": "tool_use" if calls else "end_turn",
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 1000 + turn,
                        "output_tokens": 100,
                        "cache_read_input_tokens": 500 * turn,
                        "cache_creation_input_tokens": 0 if turn else 800,
                    },
                },
            )
        message: dict = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {"id": f"call_{turn}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(calls)
            ]
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-{turn}",
                "object": "chat.completion",
                "created": 1,
                "model": self.model,
                "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}],
                "usage": {"prompt_tokens": 1000 + turn, "completion_tokens": 100, "total_tokens": 1100 + turn},
            },
        )

    def all_tool_results(self) -> list[str]:
        """Every tool result the loop sent back, in order (OpenAI wire format)."""
        body = self.bodies[-1] if self.bodies else {"messages": []}
        return [m["content"] for m in body["messages"] if m["role"] == "tool"]

    def tool_results(self, turn: int) -> list[str]:
        """The tool results the loop sent back in request ``turn`` (as plain strings)."""
        body = self.bodies[turn]
        if self.api == "anthropic":
            last = body["messages"][-1]["content"]
            return [b["content"] for b in last if b.get("type") == "tool_result"]
        return [m["content"] for m in body["messages"] if m["role"] == "tool"][-1:]

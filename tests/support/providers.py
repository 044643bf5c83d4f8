"""Model providers as the tests meet them: the environment variables of every provider's key
and base URL (``KEY_VARS``, for tests that must start without them), and the endpoints, tool
and response bodies that respx answers in place of Anthropic's and OpenAI's APIs."""

from __future__ import annotations

from harness.models.providers import ChatRequest, Message, ToolSpec
from harness.models.providers.registry import REGISTRY

KEY_VARS = sorted({e.env_var for e in REGISTRY.values() if e.env_var}
                  | {e.base_url_env for e in REGISTRY.values() if e.base_url_env})

ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
OPENAI_URL = "https://api.openai.com/v1/chat/completions"

READ_TOOL = ToolSpec(
    name="read_file",
    description="Read a file",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def anthropic_body(content, *, stop="end_turn", model="claude-sonnet-4-6", usage=None):
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 100, "output_tokens": 20},
    }


def openai_body(message, *, finish="stop", model="gpt-4o-mini-2024-07-18", usage=None):
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish, "message": {"role": "assistant", **message}}],
        "usage": usage or {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
    }


def request(**kw) -> ChatRequest:
    base = dict(messages=[Message(role="user", content="fix the bug")], model="claude-sonnet-4-6", tools=[READ_TOOL])
    base.update(kw)
    return ChatRequest(**base)

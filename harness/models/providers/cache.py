"""A disk cache of model responses.

The key is a SHA-256 over the full normalised request (model, system prompt, messages, tool
schemas, max_tokens, temperature), the provider, its base URL and the repeat index (not the
batch). An entry is the whole response as it was first received, with its usage, cost and
latency, so a replay (``Provider.chat(..., use_cache=True)``, ``bench --cache replay``) can
report what the original call cost and took. Answers are only replayed when asked: by
default every call goes to the model, so a new run is a new sample. Entries are JSON files
written atomically, so a crash never leaves a half-written entry behind.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from harness._util.files import write_text_atomic
from harness._util.places import default_cache_dir
from harness.models.providers.types import ChatRequest, ChatResponse, ToolCall, Usage

CACHE_FORMAT = 1
MAX_ENTRY_BYTES = 2 * 1024 * 1024  # a larger answer is not kept: replaying it is not worth the disk


def normalised_request(request: ChatRequest) -> dict[str, Any]:
    """The parts of a request that decide the answer (the timeout does not)."""
    data = dataclasses.asdict(request)
    data.pop("timeout_s", None)
    for optional in ("top_p", "stop"):  # absent when unset, so older keys stay valid
        if data.get(optional) is None:
            data.pop(optional, None)
    return data


def cache_key(provider: str, base_url: str | None, request: ChatRequest, repeat_index: int) -> str:
    payload = {
        "format": CACHE_FORMAT,
        "provider": provider,
        "base_url": base_url or "",
        "repeat_index": repeat_index,
        "request": normalised_request(request),
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def response_to_dict(response: ChatResponse) -> dict[str, Any]:
    return dataclasses.asdict(response)


def response_from_dict(data: dict[str, Any]) -> ChatResponse:
    return ChatResponse(
        text=data.get("text") or "",
        tool_calls=[ToolCall(**tc) for tc in data.get("tool_calls") or []],
        usage=Usage(**(data.get("usage") or {})),
        model=data.get("model") or "",
        stop_reason=data.get("stop_reason"),
        latency_ms=float(data.get("latency_ms") or 0.0),
        cost_usd=data.get("cost_usd"),
        cached=bool(data.get("cached", False)),
    )


class ResponseCache:
    """Responses stored as ``<dir>/<key[:2]>/<key>.json``."""

    def __init__(self, directory: str | Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ChatResponse | None:
        path = self._path(key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # an unreadable entry is a miss; the next write replaces it
        if data.get("format") != CACHE_FORMAT:
            return None
        return response_from_dict(data["response"])

    def put(self, key: str, response: ChatResponse) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"format": CACHE_FORMAT, "response": response_to_dict(response)}, ensure_ascii=False)
        if len(body) > MAX_ENTRY_BYTES:
            return
        write_text_atomic(path, body, mode=0o600)  # answers may hold what only the user may read

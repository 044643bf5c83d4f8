"""Transcripts: capped in size and split into chunks that stay far below D1's limits.

A transcript (the messages and tool calls of a run) can be large. The worker keeps at most
:data:`MAX_TRANSCRIPT_BYTES` of it — the first and last messages, with a marker saying how
many were left out — and stores the JSON text in chunks of at most :data:`CHUNK_BYTES`
UTF-8 bytes, one row each.
"""

from __future__ import annotations

import json
from typing import Any

MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024
CHUNK_BYTES = 90_000
# A single message larger than this is shortened before the head/tail selection.
MAX_MESSAGE_BYTES = 256 * 1024


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _shorten(message: dict[str, Any]) -> dict[str, Any]:
    """A message whose long string values are cut, marked as truncated."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if isinstance(value, str) and len(value.encode("utf-8")) > MAX_MESSAGE_BYTES // 4:
            cut = value.encode("utf-8")[: MAX_MESSAGE_BYTES // 4].decode("utf-8", "ignore")
            out[key] = cut + f"... [truncated {len(value) - len(cut)} characters]"
        elif isinstance(value, (dict, list)) and _size(value) > MAX_MESSAGE_BYTES // 4:
            out[key] = f"[truncated: {_size(value)} bytes of JSON]"
        else:
            out[key] = value
    out["truncated"] = True
    return out


def cap_transcript(messages: list[Any], max_bytes: int = MAX_TRANSCRIPT_BYTES) -> tuple[list[Any], bool]:
    """Return ``(messages, truncated)`` with the JSON size at most about ``max_bytes``."""
    truncated = False
    msgs = []
    for m in messages:
        if isinstance(m, dict) and _size(m) > MAX_MESSAGE_BYTES:
            m = _shorten(m)
            truncated = True
        msgs.append(m)
    if _size(msgs) <= max_bytes:
        return msgs, truncated
    # Keep messages alternately from the start and the end while they fit: the task and the
    # final answer are what a reader needs most.
    budget = max_bytes - 200
    head: list[Any] = []
    tail: list[Any] = []
    i, j = 0, len(msgs) - 1
    take_head = True
    while i <= j:
        m = msgs[i] if take_head else msgs[j]
        cost = _size(m) + 1
        if cost > budget:
            break
        budget -= cost
        if take_head:
            head.append(m)
            i += 1
        else:
            tail.append(m)
            j -= 1
        take_head = not take_head
    omitted = j - i + 1
    marker = {"role": "system", "truncated": True,
              "content": f"[{omitted} messages omitted: transcript over {max_bytes} bytes]"}
    return [*head, marker, *reversed(tail)], True


def split_chunks(text: str, chunk_bytes: int = CHUNK_BYTES) -> list[str]:
    """Split ``text`` into pieces of at most ``chunk_bytes`` UTF-8 bytes, never inside a character."""
    data = text.encode("utf-8")
    chunks: list[str] = []
    start = 0
    while start < len(data):
        end = min(start + chunk_bytes, len(data))
        # Step back off UTF-8 continuation bytes (0b10xxxxxx) so no character is split.
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1
        chunks.append(data[start:end].decode("utf-8"))
        start = end
    return chunks or [""]

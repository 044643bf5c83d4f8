"""Fetching a template's documentation sources as plain text.

A documentation entry has either a ``url`` (``https://``, ``http://`` or ``file://``) or a
``path`` relative to the base template's directory. Remote documents are fetched with a
timeout and a size cap (the body is read as a stream and cut at the cap). HTML becomes text
with the standard library's parser: scripts, styles and navigation chrome are dropped, block
elements become line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import httpx

from harness.specialists import documentation_file

DEFAULT_MAX_BYTES = 2_000_000
# What the model sees of one document; long pages are cut (and the cut is reported).
DEFAULT_MAX_CHARS = 60_000


class DocumentFetchError(RuntimeError):
    """A documentation source could not be read (HTTP error, timeout, missing file, ...)."""


@dataclass
class FetchedDocument:
    source: str  # the url or path as written in the template
    text: str
    content_type: str
    truncated: bool  # the body hit the size cap or the text was cut for the model


_SKIP = {"script", "style", "noscript", "template", "svg", "head", "nav", "footer"}
_BLOCK = {"p", "div", "section", "article", "main", "header", "br", "li", "ul", "ol", "pre", "table",
          "tr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "dd", "dt", "hr", "title"}


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip_depth = 0
        self._pre_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip_depth += 1
        elif tag == "pre":
            self._pre_depth += 1
        if tag in _BLOCK:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self._skip_depth:
            self._skip_depth -= 1
        elif tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
        if tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skip_depth:
            return
        if self._pre_depth:
            self.parts.append(data)  # keep code layout
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str) -> str:
    """Readable text of an HTML page (no tags, no scripts/styles, one blank line between blocks)."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line.strip() or (out and out[-1].strip()):
            out.append(line if line.strip() else "")
    return "\n".join(out).strip()


def _looks_like_html(content_type: str, name: str, text: str) -> bool:
    if "html" in content_type:
        return True
    if name.lower().endswith((".html", ".htm")):
        return True
    head = text.lstrip()[:200].lower()
    return head.startswith("<!doctype html") or head.startswith("<html")


def _read_file(path: Path, max_bytes: int) -> tuple[bytes, bool]:
    try:
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise DocumentFetchError(f"file not found: {path}") from None
    except IsADirectoryError:
        raise DocumentFetchError(f"is a directory, not a file: {path}") from None
    except OSError as exc:
        raise DocumentFetchError(f"cannot read {path}: {exc.strerror}") from None
    return data[:max_bytes], len(data) > max_bytes


def _fetch_url(url: str, client: httpx.Client, timeout_s: float, max_bytes: int) -> tuple[bytes, str, bool]:
    try:
        with client.stream("GET", url, timeout=timeout_s, follow_redirects=True) as response:
            if response.status_code >= 400:
                raise DocumentFetchError(f"HTTP {response.status_code} from {url}")
            chunks, size, truncated = [], 0, False
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > max_bytes:
                    truncated = True
                    break
            data = b"".join(chunks)[:max_bytes]
            return data, response.headers.get("content-type", ""), truncated
    except httpx.TimeoutException:
        raise DocumentFetchError(f"timed out after {timeout_s:g}s fetching {url}") from None
    except httpx.HTTPError as exc:
        raise DocumentFetchError(f"cannot fetch {url}: {exc}") from None


def fetch_document(doc: dict[str, Any], base_dir: Path, client: httpx.Client, *, timeout_s: float = 30.0,
                   max_bytes: int = DEFAULT_MAX_BYTES, max_chars: int = DEFAULT_MAX_CHARS) -> FetchedDocument:
    """Read one documentation entry as text; raise :class:`DocumentFetchError` when it cannot."""
    content_type = ""
    if doc.get("url"):
        source = doc["url"]
        parsed = urlparse(source)
        if parsed.scheme == "file":
            name = unquote(parsed.path)
            data, truncated = _read_file(documentation_file(doc, base_dir), max_bytes)
        elif parsed.scheme in ("http", "https"):
            name = parsed.path
            data, content_type, truncated = _fetch_url(source, client, timeout_s, max_bytes)
        else:
            raise DocumentFetchError(f"unsupported URL scheme {parsed.scheme!r}: {source}")
    elif doc.get("path"):
        source = doc["path"]
        name = source
        data, truncated = _read_file(documentation_file(doc, base_dir), max_bytes)
    else:
        raise DocumentFetchError("entry has neither url nor path")
    text = data.decode("utf-8", errors="replace")
    if _looks_like_html(content_type, name, text):
        text = html_to_text(text)
        content_type = content_type or "text/html"
    if not text.strip():
        raise DocumentFetchError(f"{source}: no text content")
    if len(text) > max_chars:
        text, truncated = text[:max_chars], True
    return FetchedDocument(source=source, text=text, content_type=content_type or "text/plain", truncated=truncated)

"""Enriching a template's documentation with model-written metadata (docs/mint.md, "mint enrich").

For each documentation entry (at most ``concurrency`` at a time, a rolling pool: a new one
starts as soon as one finishes): fetch the source as text, ask the model for
``{summary, key_concepts, use_cases, relevant_for_tasks, code_patterns,
relevance_to_specialist}`` as JSON (one retry when the answer is not valid JSON of that
shape), attach it with ``enriched_at`` and ``model_used``. Entries already enriched are
skipped unless ``force``. A failed entry keeps its previous state and is reported.

An answer that repeats the placeholders of the requested shape (:data:`REQUESTED_SHAPE`:
``"one or two sentences"``, ``["..."]``...) instead of describing the document is not an
enrichment: it is refused like invalid JSON (retried once with the reason, then the entry
fails), so the placeholders never reach a specialist's system prompt.

The result is written as the next ``<family>/enriched/<version>/enriched-<NNN>.json5``, after
validating it against the template schema, whenever at least one entry was enriched.
"""

from __future__ import annotations

import copy
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Literal

import httpx

from harness.mint.documents import DocumentFetchError, FetchedDocument, fetch_document
from harness.mint.output import write_next_numbered
from harness.models.providers.types import ChatRequest, ChatResponse, Message, ProviderError
from harness.specialists import Specialist, validate_template

LIST_FIELDS = ("key_concepts", "use_cases", "relevant_for_tasks", "code_patterns")
TEXT_FIELDS = ("summary", "relevance_to_specialist")

# The answer asked for, as the prompt shows it: each value is a placeholder saying what to write.
REQUESTED_SHAPE: dict[str, Any] = {
    "summary": "one or two sentences",
    "key_concepts": ["..."],
    "use_cases": ["..."],
    "relevant_for_tasks": ["task names from the list above, or short task descriptions"],
    "code_patterns": ["short code idioms or commands worth reusing"],
    "relevance_to_specialist": "how this helps the specialist do its job",
}

DEFAULT_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openai": "gpt-4o-mini",
    "openrouter": "anthropic/claude-haiku-4.5",
}

ChatFn = Callable[[ChatRequest], ChatResponse]


class InvalidEnrichment(ValueError):
    """The model's answer was not a JSON object with the enrichment fields."""


class EnrichError(RuntimeError):
    """The enriched template could not be produced (e.g. it would fail its schema)."""


@dataclass
class DocumentOutcome:
    index: int
    source: str
    status: Literal["enriched", "skipped", "failed"]
    error: str | None = None
    truncated: bool = False
    attempts: int = 0  # model calls made for this entry

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "source": self.source, "status": self.status, "error": self.error,
                "truncated": self.truncated, "attempts": self.attempts}


@dataclass
class EnrichResult:
    outcomes: list[DocumentOutcome]
    path: Path | None = None  # the enriched template written, None when nothing was enriched
    template: dict[str, Any] = field(default_factory=dict)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> list[DocumentOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path) if self.path else None,
            "enriched": self.count("enriched"),
            "skipped": self.count("skipped"),
            "failed": self.count("failed"),
            "documents": [o.to_dict() for o in self.outcomes],
        }


def build_prompt(specialist: Specialist, doc: dict[str, Any], fetched: FetchedDocument) -> str:
    """The enrichment request for one document."""
    persona = specialist.template.get("persona") or {}
    tasks = specialist.task_names
    cut = " (cut at the size limit)" if fetched.truncated else ""
    return "\n".join([
        "Analyse this documentation for a coding-agent specialist and extract metadata.",
        "",
        f"Specialist: {specialist.name} v{specialist.version}",
        f"Purpose: {persona.get('purpose', '')}",
        f"Tech stack: {', '.join(persona.get('tech_stack') or []) or '(not given)'}",
        f"Task prompts of the specialist: {', '.join(tasks) if tasks else '(none)'}",
        "",
        f"Documentation entry: {doc.get('title') or doc.get('description')} "
        f"[{doc.get('type')}] from {fetched.source}{cut}",
        "DOCUMENTATION:",
        "---",
        fetched.text,
        "---",
        "",
        "Answer with one JSON object and nothing else, with exactly these keys:",
        json.dumps(REQUESTED_SHAPE),
    ])


def _placeholder_texts() -> set[str]:
    texts: set[str] = set()
    for value in REQUESTED_SHAPE.values():
        texts.update(_normalised(v) for v in (value if isinstance(value, list) else [value]))
    return texts


def _normalised(text: str) -> str:
    # Case, spacing, quotes, brackets and end punctuation aside: "One or two sentences." is
    # the placeholder, and "...", "…" or "<...>" normalise to "".
    return " ".join(text.replace("\u2026", "...").split()).lower().strip(" \"'`.,;:!?<>[](){}")


def is_placeholder(text: str) -> bool:
    """True when ``text`` says nothing: blank, an ellipsis, or a placeholder of the requested shape."""
    norm = _normalised(text)
    return not norm or norm in _placeholder_texts()


def parse_enrichment(text: str) -> dict[str, Any]:
    """The enrichment fields from a model answer (a bare JSON object, or one in a code fence)."""
    candidate = text.strip()
    fence = re.search(r"```(?:json)?\s*(\{.*\})\s*```", candidate, re.DOTALL)
    if fence:
        candidate = fence.group(1)
    elif not candidate.startswith("{"):
        start, end = candidate.find("{"), candidate.rfind("}")
        if start == -1 or end <= start:
            raise InvalidEnrichment("no JSON object in the answer")
        candidate = candidate[start:end + 1]
    try:
        data = json.loads(candidate)
    except json.JSONDecodeError as exc:
        raise InvalidEnrichment(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    if not isinstance(data, dict):
        raise InvalidEnrichment("the JSON is not an object")
    summary = data.get("summary")
    if not isinstance(summary, str) or not summary.strip():
        raise InvalidEnrichment("'summary' is missing or empty")
    out: dict[str, Any] = {"summary": summary.strip()}
    echoed: list[str] = []  # fields that repeat the requested shape instead of filling it in
    if is_placeholder(summary):
        echoed.append("summary")
    for key in LIST_FIELDS:
        value = data.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise InvalidEnrichment(f"'{key}' is not a list")
        items = [str(v).strip() for v in value]
        if items and all(is_placeholder(item) for item in items):
            echoed.append(key)
        out[key] = [item for item in items if not is_placeholder(item)]  # a stray "..." among real items
    relevance = data.get("relevance_to_specialist", "")
    if not isinstance(relevance, str):
        raise InvalidEnrichment("'relevance_to_specialist' is not a string")
    if relevance.strip() and is_placeholder(relevance):
        echoed.append("relevance_to_specialist")
    out["relevance_to_specialist"] = relevance.strip()
    if echoed:
        raise InvalidEnrichment("the answer repeats the placeholders of the requested shape instead of "
                                f"describing the document ({', '.join(echoed)})")
    return out


def ask_model(chat: ChatFn, model: str, prompt: str, timeout_s: float) -> tuple[dict[str, Any], int]:
    """Ask for the enrichment JSON; one retry with the reason when the answer is invalid.

    Returns the parsed fields and the number of calls made.
    """
    system = "You extract structured metadata from documentation. You answer with a single JSON object only."
    messages = [Message(role="user", content=prompt)]
    response = chat(ChatRequest(messages=messages, model=model, system=system, max_tokens=1500,
                                temperature=0.0, timeout_s=timeout_s))
    try:
        return parse_enrichment(response.text), 1
    except InvalidEnrichment as first:
        messages = [*messages, Message(role="assistant", content=response.text or "(empty)"),
                    Message(role="user", content=f"That answer was not usable ({first}). Reply again with only "
                                                 "the JSON object with the requested keys.")]
        retry = chat(ChatRequest(messages=messages, model=model, system=system, max_tokens=1500,
                                 temperature=0.0, timeout_s=timeout_s))
        try:
            return parse_enrichment(retry.text), 2
        except InvalidEnrichment as second:
            raise InvalidEnrichment(f"{second} (after one retry)") from None


def _schema_ref_for(template: dict[str, Any], source: Path, target_dir: Path) -> dict[str, Any]:
    # A relative "$schema" is relative to the file; keep it pointing at the same schema.
    ref = template.get("$schema")
    if isinstance(ref, str) and "://" not in ref and not os.path.isabs(ref):
        template["$schema"] = os.path.relpath((source.parent / ref).resolve(), target_dir.resolve())
    return template


def enrich_template(
    specialist: Specialist,
    chat: ChatFn,
    model: str,
    *,
    concurrency: int = 3,
    force: bool = False,
    timeout_s: float = 30.0,
    http_client: httpx.Client | None = None,
    on_done: Callable[[DocumentOutcome], None] | None = None,
    now: Callable[[], str] | None = None,
) -> EnrichResult:
    """Enrich ``specialist``'s documentation and write the next enriched template.

    ``chat`` sends one request (normally ``provider.chat``); ``on_done`` is called as each
    entry finishes (from worker threads), e.g. to advance a progress bar.
    """
    if concurrency < 1:
        raise ValueError("concurrency must be at least 1")
    stamp = now or (lambda: datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    template = copy.deepcopy(specialist.template)
    docs: list[dict[str, Any]] = template.get("documentation") or []
    outcomes: list[DocumentOutcome | None] = [None] * len(docs)
    own_client = http_client is None
    client = http_client or httpx.Client(follow_redirects=True)

    def work(i: int) -> DocumentOutcome:
        doc = docs[i]
        source = doc.get("url") or doc.get("path") or "?"
        outcome = DocumentOutcome(i, source, "failed")
        try:
            fetched = fetch_document(doc, specialist.base_dir, client, timeout_s=timeout_s)
            outcome.truncated = fetched.truncated
            fields, outcome.attempts = ask_model(chat, model, build_prompt(specialist, doc, fetched), timeout_s)
        except (DocumentFetchError, InvalidEnrichment, ProviderError) as exc:
            outcome.error = str(exc)
            return outcome
        doc["enrichment"] = {**fields, "enriched_at": stamp(), "model_used": model}
        outcome.status = "enriched"
        return outcome

    def run(i: int) -> None:
        try:
            outcome = work(i)
        except Exception as exc:  # an unexpected failure of one entry must not lose the others
            outcome = DocumentOutcome(i, docs[i].get("url") or docs[i].get("path") or "?", "failed",
                                      error=f"{type(exc).__name__}: {exc}")
        outcomes[i] = outcome
        if on_done:
            on_done(outcome)

    todo = []
    for i, doc in enumerate(docs):
        if doc.get("enrichment") and not force:
            outcomes[i] = DocumentOutcome(i, doc.get("url") or doc.get("path") or "?", "skipped")
            if on_done:
                on_done(outcomes[i])  # type: ignore[arg-type]
        else:
            todo.append(i)
    try:
        with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="enrich") as pool:
            list(pool.map(run, todo))
    finally:
        if own_client:
            client.close()

    result = EnrichResult(outcomes=[o for o in outcomes if o is not None], template=template)
    if result.count("enriched") == 0:
        return result
    target_dir = specialist.family_dir / "enriched" / specialist.version
    _schema_ref_for(template, specialist.source, target_dir)
    issues = validate_template(template)  # keys the schema does not name are kept, as in the template
    if issues:
        raise EnrichError("enriched template fails the template schema, nothing written: "
                          + "; ".join(map(str, issues)))
    text = json.dumps(template, indent=2, ensure_ascii=False) + "\n"
    _, result.path = write_next_numbered(target_dir, "enriched", text)
    return result

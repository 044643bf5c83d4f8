"""One registry of provider prefixes: ``PREFIX:MODEL`` names a model anywhere in the harness.

A prefix says which API the model speaks (Anthropic's Messages API or OpenAI's chat
completions), where it lives and which environment variable holds its key. Well-known
OpenAI-compatible services have their base URL here, so ``groq:llama-3.1-8b-instant`` needs
only ``GROQ_API_KEY``; ``openai-compatible:MODEL`` takes any server with ``--base-url``;
``local:smollm2`` is the shipped SmolLM2 model, served on loopback by
:mod:`harness.models.local_model`.

Base URLs: an explicit ``base_url`` wins; otherwise ``openai`` and ``anthropic`` follow the
SDKs' own variables (``OPENAI_BASE_URL``, ``ANTHROPIC_BASE_URL``), ``ollama`` and ``vllm``
their ``*_BASE_URL`` variable, then the entry's default. A key from the environment is only
ever sent to the entry's own host (:func:`harness.models.providers.is_official_url` for the three
official APIs; the default host for the others): pointed elsewhere, no key is sent unless one
is given explicitly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import urlsplit

from harness.models.providers.types import MissingCredentialsError, ProviderError


@dataclass(frozen=True)
class ProviderEntry:
    """One prefix: the API it speaks, its default base URL and its key's variable."""

    prefix: str
    api: str  # "anthropic", "openai" (chat completions) or "local"
    base_url: str | None
    env_var: str | None  # None: no key needed
    key_required: bool
    description: str
    base_url_env: str | None = None  # a variable that overrides the default base URL


REGISTRY: dict[str, ProviderEntry] = {e.prefix: e for e in (
    ProviderEntry("anthropic", "anthropic", None, "ANTHROPIC_API_KEY", True, "Anthropic's Messages API",
                  "ANTHROPIC_BASE_URL"),
    ProviderEntry("openai", "openai", None, "OPENAI_API_KEY", True, "OpenAI's chat completions", "OPENAI_BASE_URL"),
    ProviderEntry("openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY", True,
                  "OpenRouter (OpenAI-compatible)"),
    ProviderEntry("google", "openai", "https://generativelanguage.googleapis.com/v1beta/openai/", "GEMINI_API_KEY",
                  True, "Google Gemini's OpenAI-compatible endpoint"),
    ProviderEntry("groq", "openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY", True, "Groq"),
    ProviderEntry("together", "openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY", True, "Together AI"),
    ProviderEntry("mistral", "openai", "https://api.mistral.ai/v1", "MISTRAL_API_KEY", True, "Mistral"),
    ProviderEntry("deepseek", "openai", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY", True, "DeepSeek"),
    ProviderEntry("ollama", "openai", "http://127.0.0.1:11434/v1", None, False, "Ollama on this machine",
                  "OLLAMA_BASE_URL"),
    ProviderEntry("vllm", "openai", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", False, "a vLLM server",
                  "VLLM_BASE_URL"),
    ProviderEntry("openai-compatible", "openai", None, None, False, "any OpenAI-compatible server (--base-url)"),
    ProviderEntry("local", "local", None, None, False, "the shipped SmolLM2-135M model under llama.cpp"),
)}

#: Short names people type for an entry.
ALIASES = {"gemini": "google", "compatible": "openai-compatible"}


@dataclass(frozen=True)
class Target:
    """A model to call: ``prefix:model`` (``spec``), with the base URL it resolves to."""

    prefix: str
    model: str
    base_url: str | None = None

    @property
    def spec(self) -> str:
        return f"{self.prefix}:{self.model}"

    @property
    def entry(self) -> ProviderEntry:
        return REGISTRY[self.prefix]


def known_prefixes() -> str:
    return ", ".join(REGISTRY)


def parse_target(text: str, *, base_url: str | None = None) -> Target:
    """``"groq:llama-3.1-8b-instant"`` -> a :class:`Target`. The model may itself contain colons
    (``ollama:llama3:8b``). ValueError naming the problem for anything else."""
    text = (text or "").strip()
    prefix, sep, model = text.partition(":")
    prefix = ALIASES.get(prefix.lower(), prefix.lower())
    if not sep or not model.strip():
        raise ValueError(f"{text!r}: expected PROVIDER:MODEL (providers: {known_prefixes()})")
    if prefix not in REGISTRY:
        raise ValueError(f"{text!r}: unknown provider {prefix!r}; known: {known_prefixes()}")
    entry = REGISTRY[prefix]
    if prefix == "openai-compatible" and not base_url:
        raise ValueError(f"{text!r}: openai-compatible needs --base-url (e.g. http://127.0.0.1:8080/v1)")
    if prefix == "local" and base_url:
        raise ValueError(f"{text!r}: local is the shipped model; use openai-compatible:MODEL with --base-url instead")
    resolved = base_url or (os.environ.get(entry.base_url_env) if entry.base_url_env else None) or entry.base_url
    return Target(prefix, model.strip(), resolved)


def parse_targets(text: str, *, base_url: str | None = None) -> list[Target]:
    """A comma-separated list of targets, in order, without duplicates (ValueError on a bad one)."""
    out: list[Target] = []
    for part in (text or "").split(","):
        if part.strip():
            target = parse_target(part, base_url=base_url)
            if target not in out:
                out.append(target)
    if not out:
        raise ValueError("no provider given (expected PROVIDER:MODEL[,PROVIDER:MODEL...])")
    return out


def _own_host(target: Target) -> bool:
    """True when the target's base URL is its entry's own host (where its key may go)."""
    from harness.models.providers import is_official_url

    entry = target.entry
    if entry.prefix in ("anthropic", "openai", "openrouter"):
        return is_official_url(entry.prefix, target.base_url)
    if entry.base_url is None or target.base_url is None:
        return True
    return (urlsplit(target.base_url).hostname or "") == (urlsplit(entry.base_url).hostname or "")


def key_for(target: Target) -> str | None:
    """The key the target's calls carry: its variable's value, when the target is its own host."""
    env = target.entry.env_var
    if env is None or not _own_host(target):
        return None
    return os.environ.get(env) or None


def missing_credentials(targets: list[Target]) -> list[tuple[Target, str]]:
    """(target, variable) for every target whose required key is not set: checked before any
    request, so a run never starts half-able."""
    out = []
    for target in targets:
        entry = target.entry
        if entry.key_required and _own_host(target) and not key_for(target):
            out.append((target, entry.env_var or ""))
    return out


def build_provider(target: Target, *, max_connections: int = 100, cache=None, retry=None,
                   async_http_client=None, local_config=None):
    """The :class:`~harness.models.providers.Provider` that calls ``target``'s model.

    ``local`` starts (or reuses) the process-wide llama.cpp server. Raises
    :class:`MissingCredentialsError` naming the variable when a required key is missing.
    """
    from harness.models.providers import get_provider

    entry = target.entry
    common = {"max_connections": max_connections, "cache": cache, "retry": retry, "async_http_client": async_http_client}
    if entry.api == "anthropic":
        return get_provider("anthropic", base_url=target.base_url, **common)
    if entry.prefix in ("openai", "openrouter"):
        return get_provider(entry.prefix, base_url=target.base_url, **common)
    if entry.api == "local":
        from harness.models.local_model import shared_server

        server = shared_server(local_config)
        # Keeps the name openai-compatible, as the local agent's provider does: the price table's
        # zero-price row for the shipped model is under that name, so its cost is 0, not unknown.
        return get_provider("openai-compatible", base_url=server.base_url, **common)
    key = key_for(target)
    if entry.key_required and _own_host(target) and not key:
        raise MissingCredentialsError(entry.env_var or "", entry.prefix)
    if not target.base_url:
        raise ProviderError(f"{target.spec}: no base URL; pass --base-url")
    provider = get_provider("openai-compatible", base_url=target.base_url, api_key=key, **common)
    provider.name = entry.prefix  # errors, the response cache and the price table see the prefix
    return provider

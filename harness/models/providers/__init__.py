"""The provider layer: one way to call Anthropic, OpenAI, OpenRouter and OpenAI-compatible servers.

``get_provider(name)`` builds a :class:`Provider`; ``provider.chat(request)`` sends a
provider-neutral :class:`ChatRequest` and returns a normalised :class:`ChatResponse` (text,
tool calls, usage with cache tokens, latency, cost). Every call goes through one retry policy
(:mod:`harness.models.providers.retry`) and a disk response cache (:mod:`harness.models.providers.cache`).
``await provider.achat(request)`` is the same call as a coroutine, through the SDKs' async
clients, for many calls in flight on one event loop (``stream=True`` measures the time to the
first token; ``retry=False`` makes one attempt). SDKs are imported only when a model is
actually called.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from harness.models.providers.cache import ResponseCache
from harness.models.providers.retry import RetryPolicy
from harness.models.providers.types import (
    ChatRequest,
    ChatResponse,
    Message,
    MissingCredentialsError,
    ProviderError,
    ToolCall,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from harness.models.providers.base import Provider


def __getattr__(name: str) -> Any:
    """``Provider`` is imported when first asked for: its module brings asyncio, which what only
    reads provider names (a manifest check, a plan) does without."""
    if name == "Provider":
        from harness.models.providers.base import Provider

        return Provider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "Provider"})


PROVIDER_NAMES = ("anthropic", "openai", "openrouter", "openai-compatible")

# The environment variable holding each provider's key (None: no key needed).
CREDENTIAL_ENV: dict[str, str | None] = {
    "anthropic": "ANTHROPIC_API_KEY",
    "openai": "OPENAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "openai-compatible": None,
}

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "CREDENTIAL_ENV",
    "Message",
    "MissingCredentialsError",
    "PROVIDER_NAMES",
    "Provider",
    "ProviderError",
    "ResponseCache",
    "RetryPolicy",
    "ToolCall",
    "ToolSpec",
    "Usage",
    "get_provider",
    "has_credentials",
]


# The only hosts a provider's key from the environment is ever sent to.
OFFICIAL_HOSTS: dict[str, str] = {
    "anthropic": "api.anthropic.com",
    "openai": "api.openai.com",
    "openrouter": "openrouter.ai",
}


def is_official_url(name: str, base_url: str | None) -> bool:
    """True when ``base_url`` is unset or points at provider ``name``'s own API host."""
    if not base_url:
        return True
    from urllib.parse import urlsplit

    host = (urlsplit(base_url).hostname or "").lower()
    return host == OFFICIAL_HOSTS.get(name)


def has_credentials(name: str) -> bool:
    """True when the provider ``name`` can be called: its key's environment variable is set (or none is needed)."""
    if name not in CREDENTIAL_ENV:
        raise ProviderError(f"unknown provider {name!r}; known: {', '.join(PROVIDER_NAMES)}")
    env = CREDENTIAL_ENV[name]
    return env is None or bool(os.environ.get(env))


def get_provider(
    name: str,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    retry: RetryPolicy | None = None,
    cache: ResponseCache | None = None,
    http_client: Any = None,
    async_http_client: Any = None,
    max_connections: int = 100,
) -> Provider:
    """Build the provider ``name`` (one of :data:`PROVIDER_NAMES`).

    ``api_key`` defaults to the provider's environment variable; a missing key raises
    :class:`MissingCredentialsError` naming it. The environment's key goes only to the
    provider's own host: with a ``base_url`` elsewhere (a local server, a proxy), ``openai``
    becomes ``openai-compatible`` and no key is sent unless ``api_key`` is given. ``retry``
    and ``cache`` override the default policy and cache directory; ``http_client`` (an
    ``httpx.Client``) replaces the connection the SDK sends through, ``async_http_client`` (an
    ``httpx.AsyncClient``) that of :meth:`Provider.achat`, whose own pool otherwise holds up to
    ``max_connections`` connections (size it to the calls you keep in flight).
    """
    if not is_official_url(name, base_url) and api_key is None:
        if name == "openai":
            name = "openai-compatible"
        elif name in OFFICIAL_HOSTS:
            api_key = "not-needed"  # a placeholder: the SDK insists on a key, the real one stays home
    kwargs: dict[str, Any] = {
        "base_url": base_url,
        "api_key": api_key,
        "retry": retry,
        "cache": cache,
        "http_client": http_client,
        "async_http_client": async_http_client,
        "max_connections": max_connections,
    }
    if name == "anthropic":
        from harness.models.providers.anthropic_provider import AnthropicProvider

        return AnthropicProvider(**kwargs)
    if name in ("openai", "openrouter", "openai-compatible"):
        from harness.models.providers.openai_provider import OpenAICompatibleProvider, OpenAIProvider, OpenRouterProvider

        cls = {"openai": OpenAIProvider, "openrouter": OpenRouterProvider, "openai-compatible": OpenAICompatibleProvider}[name]
        return cls(**kwargs)
    raise ProviderError(f"unknown provider {name!r}; known: {', '.join(PROVIDER_NAMES)}")

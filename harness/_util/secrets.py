"""Secrets of the harness's environment: which variables hold them, and redacting their values.

A variable is secret when its name looks like a credential (``*_API_KEY``, ``*_TOKEN``,
``*SECRET*``, ``*PASSWORD*``, ...). Secret variables are never handed to a command run for an
agent or a scenario (the sandbox builds a clean environment), and their *values* are replaced
by ``[REDACTED:<NAME>]`` in everything stored: transcripts, tool outputs, evaluator details
and error messages (:func:`redact`, applied to every run before it is posted or spooled).

Values shorter than :data:`MIN_SECRET_LENGTH` characters are not redacted: a one-character
"token" would blank out ordinary text and protects nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MIN_SECRET_LENGTH = 8

_SECRET_NAME = re.compile(
    r"(API_KEY|APIKEY|_TOKEN|TOKEN_|^TOKEN$|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_KEY|AUTH(?!OR)|_KEY$|ACCESS_KEY)",
    re.IGNORECASE,
)
# Names that do not match the pattern but carry credentials or point at the results store.
_SECRET_EXACT = frozenset({"ZE_BENCHMARKS_WORKER_URL", "AWS_ACCESS_KEY_ID", "DATABASE_URL"})
# Names that match the pattern but hold no secret (paths, switches).
_NOT_SECRET = frozenset({"SSH_AUTH_SOCK", "XAUTHORITY", "GPG_AGENT_INFO"})


def is_secret_name(name: str) -> bool:
    """True when an environment variable called ``name`` should be treated as a secret."""
    if name in _NOT_SECRET:
        return False
    return name in _SECRET_EXACT or bool(_SECRET_NAME.search(name))


def secret_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{value: name}`` of the secret variables in ``environ`` (default ``os.environ``)."""
    env = os.environ if environ is None else environ
    found: dict[str, str] = {}
    for name, value in env.items():
        if value and len(value) >= MIN_SECRET_LENGTH and is_secret_name(name):
            found.setdefault(value, name)
    return found


@dataclass
class Redactor:
    """Replaces known secret values in text and in nested JSON-like data."""

    secrets: dict[str, str]  # value -> variable name

    def __post_init__(self) -> None:
        # Longest first, so a secret containing another is replaced whole.
        values = sorted(self.secrets, key=len, reverse=True)
        self._pattern = re.compile("|".join(re.escape(v) for v in values)) if values else None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> "Redactor":
        return cls(secret_values(environ))

    def text(self, value: str) -> str:
        if self._pattern is None or not value:
            return value
        return self._pattern.sub(lambda m: f"[REDACTED:{self.secrets[m.group(0)]}]", value)

    def data(self, value: Any) -> Any:
        """A copy of ``value`` with every string (keys included) redacted."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(v) for v in value)
        return value


def redact(value: Any, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` with the secret values of the environment replaced (strings, dicts, lists)."""
    return Redactor.from_environment(environ).data(value)

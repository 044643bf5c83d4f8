"""Worker configuration, read from the environment (Workers vars/secrets or ``os.environ``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# Used by ``worker dev`` only while it listens on a loopback address and no key is set.
# A deployed worker never falls back to it.
DEV_API_KEY = "zebench-dev-key"

DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024
# Runs per POST /api/results/bulk, at most: about seven D1 queries a run, and a Workers
# invocation may run 1,000 on paid plans (50 on the Free plan: set MAX_BULK_RUNS=5 there).
MAX_BULK_RUNS = 50


@dataclass(frozen=True)
class WorkerConfig:
    """What the core needs to know about where it runs.

    ``api_key`` None means writes are refused (a deployed worker without ``API_SECRET_KEY``).
    With a key, reads need it too (runs hold transcripts and command output) unless
    ``public_reads`` (``ZE_BENCHMARKS_PUBLIC_READS=1``). ``allowed_origins`` holds exact
    origins, or ``"*"`` for any.
    """

    api_key: str | None = None
    allowed_origins: tuple[str, ...] = field(default_factory=tuple)
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    public_reads: bool = False
    max_bulk_runs: int = MAX_BULK_RUNS

    @classmethod
    def from_env(cls, env: Mapping[str, Any] | Any) -> "WorkerConfig":
        """Read ``API_SECRET_KEY``, ``ALLOWED_ORIGINS`` (comma separated), ``MAX_BODY_BYTES``,
        ``ZE_BENCHMARKS_PUBLIC_READS`` (``1``/``true``: reads need no key), ``MAX_BULK_RUNS``
        (runs per bulk request, 1 to 50; ValueError naming it otherwise).

        ``env`` is a mapping (``os.environ``) or an object with attributes (the Workers ``env``).
        """
        key = _get(env, "API_SECRET_KEY")
        origins = _get(env, "ALLOWED_ORIGINS") or ""
        max_body = _get(env, "MAX_BODY_BYTES")
        public = (_get(env, "ZE_BENCHMARKS_PUBLIC_READS") or "").strip().lower() in ("1", "true", "yes")
        return cls(
            api_key=key or None,
            allowed_origins=parse_origins(origins),
            max_body_bytes=int(max_body) if max_body else DEFAULT_MAX_BODY_BYTES,
            public_reads=public,
            max_bulk_runs=_bulk_runs(_get(env, "MAX_BULK_RUNS")),
        )


def _bulk_runs(value: str | None) -> int:
    if value is None:
        return MAX_BULK_RUNS
    try:
        runs = int(value.strip())
    except ValueError:
        runs = 0
    if not 1 <= runs <= MAX_BULK_RUNS:
        raise ValueError(f"MAX_BULK_RUNS must be a whole number from 1 to {MAX_BULK_RUNS}; got {value!r}")
    return runs


def parse_origins(value: str) -> tuple[str, ...]:
    """``"https://a.example, https://b.example"`` -> a tuple without blanks or trailing slashes."""
    return tuple(o.strip().rstrip("/") for o in value.split(",") if o.strip())


def _get(env: Any, name: str) -> str | None:
    if isinstance(env, Mapping):
        value = env.get(name)
    else:
        try:
            value = getattr(env, name)
        except AttributeError:
            return None
    if value is None:
        return None
    text = str(value)
    # Under Pyodide an absent binding can surface as JS undefined/null proxies.
    return None if text in ("undefined", "null", "") else text

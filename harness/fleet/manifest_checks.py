"""The schema checks of a fleet manifest: the fast path beside jsonschema, and the messages.

:func:`_schema_issues` is ``validate("fleet", document)`` (``harness/schemas/fleet.schema.json``)
with the plainly valid repositories left out of it, and without jsonschema at all (a long
import) when the rest of the manifest is plainly valid too. "Plainly valid" is decided by
rules in plain Python built from :mod:`harness._util.jsonschema_fast`, never laxer than the schema
(``tests/test_fleet_manifest.py`` holds them to jsonschema's verdict on about 1,000 variants):
a NaN or an infinity where the schema asks for a number is refused by both, as for datasets.

:func:`_problem_lines` words each schema issue as ``field: what``, one line per unknown key
with the key it looks like a misspelling of (``(did you mean 'providers'?)``).
"""

from __future__ import annotations

import re
from typing import Any

from harness._util.jsonschema_fast import is_count, is_number, is_text, plain_object, suggestion, unknown_keys
from harness._util.jsonschemas import SchemaIssue, load_schema, validate_long_list

_REPO_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_REPOSITORY_RULES: dict[str, Any] = {
    "repo_id": lambda v: type(v) is str and _REPO_ID.fullmatch(v) is not None,
    "path": is_text,
    "git_url": is_text,
    "adapter": lambda v: v in ("native", "generic") and type(v) is str,
    "scenarios": lambda v: type(v) is list and all(is_text(x) for x in v),
    "metadata": lambda v: type(v) is dict,
}


def _plain_repository(raw: Any) -> bool:
    """True only when ``raw`` certainly satisfies the schema's repository (never laxer)."""
    return (type(raw) is dict and "repo_id" in raw and ("path" in raw or "git_url" in raw)
            and plain_object(raw, _REPOSITORY_RULES))


_PROVIDER = re.compile(r"[^:\s]+:\S.*")
_SETTINGS_RULES: dict[str, Any] = {
    "temperature": lambda v: is_number(v, 0, 2),
    "max_tokens": is_count,
    "top_p": lambda v: is_number(v, high=1, above=0),
    "stop": lambda v: is_text(v) or (type(v) is list and len(v) <= 4 and all(is_text(x) for x in v)),
}
_PROFILE_RULES: dict[str, Any] = {
    "dataset": is_text, "suite": is_text, "tier": is_text, "description": lambda v: type(v) is str,
    "scenarios": lambda v: type(v) is list and all(is_text(x) for x in v),
    "iterations": is_count, "num_examples": is_count,
    "concurrency": lambda v: is_count(v, 1, 1024),
    "request_delay_ms": lambda v: is_number(v, 0),
    "settings": lambda v: plain_object(v, _SETTINGS_RULES),
    "metadata": lambda v: type(v) is dict,
}
_OUTPUT_RULES: dict[str, Any] = {
    "base_dir": is_text,
    "formats": lambda v: (type(v) is list and len(set(v) if all(type(x) is str for x in v) else ()) == len(v)
                          and all(x in ("json", "yaml", "csv", "html") for x in v)),
    "save_responses": lambda v: type(v) is bool, "generate_reports": lambda v: type(v) is bool,
}
_GLOBAL_RULES: dict[str, Any] = {
    "continue_on_failure": lambda v: type(v) is bool, "random_seed": lambda v: type(v) is int,
    "test_timeout_seconds": lambda v: is_number(v, above=0),
    "max_retries": lambda v: is_count(v, 0, 20), "custom": lambda v: type(v) is dict,
    "judge": lambda v: type(v) is str and bool(v),
}


def _plain_provider(raw: Any) -> bool:
    if type(raw) is str:
        return _PROVIDER.fullmatch(raw) is not None
    return (type(raw) is dict and "provider" in raw and set(raw) <= {"provider", "base_url"}
            and type(raw["provider"]) is str and _PROVIDER.fullmatch(raw["provider"]) is not None
            and ("base_url" not in raw or is_text(raw["base_url"])))


_TOP_RULES: dict[str, Any] = {
    "fleet_id": lambda v: type(v) is str and _REPO_ID.fullmatch(v) is not None,
    "version": lambda v: v in ("1.0", "1") if type(v) is str else type(v) in (int, float) and v == 1,
    "description": lambda v: type(v) is str,
    "metadata": lambda v: type(v) is dict,
    "repositories": lambda v: type(v) is list and len(v) > 0,  # each item is checked on its own
    "providers": lambda v: type(v) is list and len(v) > 0 and all(_plain_provider(p) for p in v),
    "scenario_profiles": lambda v: type(v) is dict and all(
        type(k) is str and _REPO_ID.fullmatch(k) is not None and plain_object(p, _PROFILE_RULES)
        and not ("dataset" in p and "suite" in p) for k, p in v.items()),
    "output": lambda v: plain_object(v, _OUTPUT_RULES),
    "global_settings": lambda v: plain_object(v, _GLOBAL_RULES),
}


def _plain_top(document: dict[str, Any]) -> bool:
    """True only when ``document`` (its repositories aside) certainly satisfies the schema
    (never laxer): then jsonschema, a long import, is not needed at all."""
    return "fleet_id" in document and "providers" in document and plain_object(document, _TOP_RULES)


def _schema_issues(document: Any) -> list[Any]:
    """``validate("fleet", document)``, with the plainly valid repositories left out of it: a
    manifest of a thousand repositories is checked by jsonschema in a fraction of the time, and
    a plainly valid manifest is not handed to jsonschema at all."""
    return validate_long_list("fleet", document, "repositories", _plain_repository, _plain_top)


def _known_keys(document: Any, where: str) -> tuple[str, ...]:
    """The keys the schema names for the object at ``where`` (a field path of ``document``)."""
    schema = load_schema("fleet")
    defs = schema["$defs"]
    profiles = document.get("scenario_profiles") if isinstance(document, dict) else None
    profiles = profiles if isinstance(profiles, dict) else {}
    if where == "":
        props = schema["properties"]
    elif re.fullmatch(r"repositories\[\d+\]", where):
        props = defs["repository"]["properties"]
    elif where in ("output", "global_settings"):
        props = defs["output" if where == "output" else "globalSettings"]["properties"]
    elif where.startswith("scenario_profiles.") and where[len("scenario_profiles."):] in profiles:
        props = defs["profile"]["properties"]
    elif (where.startswith("scenario_profiles.") and where.endswith(".settings")
          and where[len("scenario_profiles."):-len(".settings")] in profiles):
        props = defs["settings"]["properties"]
    else:
        return ()
    return tuple(props)


def _problem_lines(issue: SchemaIssue, document: Any) -> list[str]:
    """One problem line per schema issue, and one per unknown key naming it (with the key it
    looks like a misspelling of)."""
    where = issue.field or "(top level)"
    names = unknown_keys(issue.message)
    if names:
        known = _known_keys(document, issue.field)
        return [f"{where}: unknown key {name!r}{suggestion(name, known)}" for name in names]
    return [f"{where}: {issue.message}"]

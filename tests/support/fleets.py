"""Fleets against the loopback mock model server: the mock's answers to a small generated
dataset, the ``mock`` fixture, repositories holding that dataset, a manifest of two
repositories x two providers, and running a fleet from it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness import fleet
from harness.fleet.manifest import parse_manifest
from harness.testing.mock_model import ThreadedMock

ANSWERS = {"Question 1?": "=1", "Question 2?": "=2", "Question 3?": "=3"}


def dataset(n: int = 4, name: str = "qa", extra: list | None = None) -> dict:
    cases = [{"id": f"q{i}", "category": "odd" if i % 2 else "even", "prompt": f"Question {i}?",
              "assert": [{"type": "contains", "value": f"={i}"}]} for i in range(n)]
    return {"name": name, "test_cases": cases + (extra or [])}


@pytest.fixture
def mock(mock_server):
    """``mock(**config)``: the loopback mock of ``mock_server`` (support.datasets), answering
    ANSWERS by default; a module using it imports ``mock_server`` too."""
    def start(**config) -> ThreadedMock:
        config.setdefault("answers", ANSWERS)
        return mock_server(**config)

    return start


def make_repos(root: Path, names=("a", "b"), data: dict | None = None) -> None:
    for name in names:
        (root / name / "datasets").mkdir(parents=True, exist_ok=True)
        (root / name / "datasets" / "qa.yaml").write_text(yaml.safe_dump(data or dataset()))


def manifest_doc(url: str, **extra) -> dict:
    doc = {"fleet_id": "t", "description": "test fleet",
           "repositories": [{"repo_id": "a", "path": "a", "metadata": {"team": "x"}},
                            {"repo_id": "b", "path": "b", "adapter": "generic"}],
           "providers": [{"provider": "openai-compatible:m1", "base_url": url},
                         {"provider": "openai-compatible:m2", "base_url": url}],
           "scenario_profiles": {"qa": {"dataset": "qa", "concurrency": 2}},
           "output": {"base_dir": "out", "formats": ["json", "yaml", "csv", "html"]},
           "global_settings": {"custom": {"ticket": "T-1"}}}
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key] = {**doc[key], **value}
        else:
            doc[key] = value
    return doc


def run_fleet(root: Path, doc: dict, client=None, **options) -> tuple[dict, Path]:
    manifest = parse_manifest(doc, root=root)
    results = fleet.run(manifest, client=client, **options)
    return results, manifest.base_dir / results["run_id"]

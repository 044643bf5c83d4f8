"""Dataset runs against the loopback mock model server of :mod:`harness.testing.mock_model`:
the mock's scripted answers and a small dataset whose expected outcome is known, the ``env``
fixture (no provider key from the environment, the results store under ``tmp_path``; autouse
in every module that imports it), the ``mock_server`` fixture, and builders of datasets, targets
and run options.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from harness.datasets.planning import DatasetRunOptions
from harness.results_log import read_results
from harness.models.providers.registry import parse_target
from harness.testing.mock_model import MockConfig, ThreadedMock
from support.scenario_builders import use_local_store
from support.providers import KEY_VARS

BENCH = os.path.join(os.path.dirname(sys.executable), "bench")

#: The mock's scripted answers: the right answer of some prompts.
ANSWERS = {
    "What is 2+2?": "The answer is 4.",
    "What is the capital of France?": "Paris, of course.",
}

CASES = [
    {"id": "add", "category": "math", "prompt": "What is 2+2?", "assert": [{"type": "contains", "value": "4"}]},
    {"id": "capital", "category": "geo", "prompt": "What is the capital of {{country}}?",
     "variables": {"country": "France"}, "assert": [{"type": "regex", "value": "(?i)\\bparis\\b"}]},
    {"id": "color", "category": "misc", "prompt": "Name a color.", "assert": [{"type": "contains", "value": "blue"}]},
    {"id": "count", "category": "math", "prompt": "Count to three.",
     "assert": [{"type": "regex", "value": "^1, 2, 3$"}]},
    {"id": "free", "category": "misc", "prompt": "Say anything."},
]
EXPECTED = {"add": "passed", "capital": "passed", "color": "failed", "count": "failed", "free": "ungraded"}


@pytest.fixture(autouse=True)
def env(tmp_path, monkeypatch):
    """No provider key nor judge from the environment; the results store under tmp_path."""
    for name in [*KEY_VARS, "ZE_BENCHMARKS_JUDGE_MODEL"]:
        monkeypatch.delenv(name, raising=False)
    use_local_store(monkeypatch, tmp_path)
    return tmp_path


@pytest.fixture
def mock_server():
    started: list[ThreadedMock] = []

    def start(**config) -> ThreadedMock:
        config.setdefault("delay_ms", 5)
        mock = ThreadedMock(MockConfig(**config))
        started.append(mock)
        return mock

    yield start
    for mock in started:
        mock.close()


def write_dataset(path: Path, cases: list[dict] | None = None, name: str = "tiny", **top) -> Path:
    path.write_text(json.dumps({"name": name, "version": "1", **top, "test_cases": cases or CASES}),
                    encoding="utf-8")
    return path


def targets_of(mock: ThreadedMock, *models: str):
    return [parse_target(f"openai-compatible:{m}", base_url=mock.base_url) for m in models or ("m",)]


def options(dataset: Path, out: Path, targets, **kw) -> DatasetRunOptions:
    kw.setdefault("concurrency", 4)
    return DatasetRunOptions(dataset=str(dataset), targets=list(targets), output_dir=out, **kw)


def lines_of(out: Path) -> list[dict]:
    cells, _ = read_results(out / "results.jsonl")
    return cells


def resume_options(out: Path, **kw) -> DatasetRunOptions:
    return DatasetRunOptions(output_dir=out, resume=True, **kw)

"""A large cold plan checks part of its dataset files in a forked child (harness/datasets/warm.py)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from harness.datasets import format as fmt
from harness.datasets import warm
from harness.fleet import load_manifest, plan_fleet

REPOS = 12


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    """A manifest of REPOS repositories, each with its own datasets/qa.yaml; a cache of its own."""
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("ZE_BENCHMARKS_DATASET_CACHE", raising=False)
    monkeypatch.setattr(warm, "MIN_FILES", 4)
    repos = []
    for r in range(REPOS):
        path = tmp_path / "repos" / f"r{r}" / "datasets" / "qa.yaml"
        path.parent.mkdir(parents=True)
        cases = "".join(f"  - id: c{i}\n    prompt: \"Say r{r}/{i}.\"\n    expected: \"r{r}/{i}\"\n" for i in range(3))
        path.write_text(f"name: qa\nversion: \"1.0\"\ntest_cases:\n{cases}", "utf-8")
        repos.append({"repo_id": f"r{r}", "path": f"repos/r{r}"})
    manifest = {"fleet_id": "warm", "version": "1.0", "repositories": repos,
                "providers": [{"provider": "openai-compatible:m1", "base_url": "http://127.0.0.1:9/v1"}], "scenario_profiles": {"qa": {"dataset": "qa"}}}
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(manifest), "utf-8")
    return path


def _planned(plan) -> list:
    return [(c.repo.repo_id, c.source, c.planned, c.problem) for c in plan.cells]


def _spy(monkeypatch) -> tuple[list[str], list[int]]:
    """The files this process parses, and the children it forks."""
    read, forks = [], []
    real_read, real_fork = fmt._read_document, os.fork

    def reading(path, data=None):
        read.append(str(path))
        return real_read(path, data)

    def forking():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(fmt, "_read_document", reading)
    monkeypatch.setattr(os, "fork", forking)
    return read, forks


@pytest.mark.skipif(not warm.can_fork(), reason="needs fork and two processors")
def test_a_cold_plan_checks_the_later_files_in_a_child_and_plans_the_same(fleet, tmp_path, monkeypatch):
    read, forks = _spy(monkeypatch)
    plan = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1
    assert 0 < len(read) < REPOS  # the child's files came from the cache
    assert read == sorted(read, key=lambda p: int(p.split("/r")[-1].split("/")[0]))[:len(read)]  # the earlier ones
    cache = fmt.CheckedCache.default()
    assert len(list(cache.directory.glob("*.json"))) == REPOS
    # The same cells and tests as a plan made in one process without any cache.
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    alone = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1 and _planned(plan) == _planned(alone) and plan.planned_tests == REPOS * 3


@pytest.mark.skipif(not warm.can_fork(), reason="needs fork and two processors")
def test_a_broken_file_among_the_childs_is_reported_as_in_one_process(fleet, tmp_path, monkeypatch):
    broken = tmp_path / "repos" / f"r{REPOS - 1}" / "datasets" / "qa.yaml"
    broken.write_text(broken.read_text().replace('    prompt: "Say', '    promt: "Say', 1))
    read, forks = _spy(monkeypatch)
    plan = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1 and str(broken) in read  # not kept by the child: read here, and reported
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    assert plan.problems == plan_fleet(load_manifest(fleet)).problems
    assert len(plan.problems) == 1 and "test_cases[0]" in plan.problems[0] and f"r{REPOS - 1}" in plan.problems[0]


def test_no_child_when_the_files_were_checked_the_cache_is_off_or_a_thread_runs(fleet, monkeypatch):
    plan_fleet(load_manifest(fleet))
    read, forks = _spy(monkeypatch)
    plan_fleet(load_manifest(fleet))  # every file kept by the first plan
    assert forks == [] and read == []
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    plan_fleet(load_manifest(fleet))
    assert forks == [] and len(read) == REPOS
    monkeypatch.delenv("ZE_BENCHMARKS_DATASET_CACHE")
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not warm.can_fork()
        assert warm.check_elsewhere([f"f{i}" for i in range(warm.MIN_FILES)]) is None
    finally:
        stop.set()
        other.join()


@pytest.mark.skipif(not warm.can_fork(), reason="needs fork and two processors")
def test_stop_ends_a_child_that_is_still_checking(fleet, tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "load_file", lambda path: time.sleep(60))
    warming = warm.check_elsewhere([str(tmp_path / f"f{i}.yaml") for i in range(warm.MIN_FILES)])
    assert warming is not None and warming.covers(str(tmp_path / "f0.yaml"))
    warming.stop()
    assert not warming.covers(str(tmp_path / "f0.yaml"))
    with pytest.raises(ChildProcessError):
        os.waitpid(warming.pid, os.WNOHANG)  # reaped: no such child any more

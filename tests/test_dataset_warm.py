"""A large cold plan checks its dataset files with a forked child going the other way (harness/datasets/warm.py)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

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


def _spy(monkeypatch, pause: float = 0.0) -> tuple[list[str], list[int]]:
    """The files this process parses (each taking ``pause`` seconds more here, a tenth of that
    in a child), and the children it forks."""
    read, forks = [], []
    real_read, real_fork = fmt._read_document, os.fork
    me = os.getpid()

    def reading(path, data=None):
        if os.getpid() == me:
            read.append(str(path))
            time.sleep(pause)
        else:
            time.sleep(pause / 10)
        return real_read(path, data)

    def forking():
        pid = real_fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(fmt, "_read_document", reading)
    monkeypatch.setattr(os, "fork", forking)
    return read, forks


def _number(path: str) -> int:
    return int(path.split("/r")[-1].split("/")[0])


@pytest.mark.skipif(not warm.can_fork(), reason="needs fork and two processors")
def test_a_cold_plan_meets_a_child_checking_from_the_end_and_plans_the_same(fleet, tmp_path, monkeypatch):
    read, forks = _spy(monkeypatch, pause=0.1)  # this process is the slower: the child does most
    plan = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1
    assert 0 < len(read) < REPOS  # the child's files came from the cache
    assert [_number(p) for p in read] == list(range(len(read)))  # this process went from the first
    cache = fmt.CheckedCache.default()
    assert len(list(cache.directory.glob("*.json"))) == REPOS
    assert not list(cache.directory.glob(".*.tmp"))
    # The same cells and tests as a plan made in one process without any cache.
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    alone = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1 and _planned(plan) == _planned(alone) and plan.planned_tests == REPOS * 3


@pytest.mark.skipif(not warm.can_fork(), reason="needs fork and two processors")
def test_a_broken_file_among_the_childs_is_reported_as_in_one_process(fleet, tmp_path, monkeypatch):
    broken = tmp_path / "repos" / f"r{REPOS - 1}" / "datasets" / "qa.yaml"
    broken.write_text(broken.read_text().replace('    prompt: "Say', '    promt: "Say', 1))
    read, forks = _spy(monkeypatch, pause=0.1)
    plan = plan_fleet(load_manifest(fleet))
    assert len(forks) == 1 and len(read) < REPOS and str(broken) in read  # not kept by the child: read here
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
def test_stop_ends_the_child_after_the_file_in_hand(fleet, tmp_path, monkeypatch):
    done = tmp_path / "done"
    done.mkdir()

    def slow(path):  # in the child: notes each file, a fifth of a second each
        (done / Path(path).name).touch()
        time.sleep(0.2)

    monkeypatch.setattr(fmt, "keep_checked", slow)
    paths = [str(tmp_path / f"f{i}.yaml") for i in range(warm.MIN_FILES)]
    warming = warm.check_elsewhere(paths)
    assert warming is not None
    while not any(done.iterdir()):
        time.sleep(0.01)
    warming.stop()
    assert 0 < len(list(done.iterdir())) < len(paths)  # it stopped long before the end
    assert (done / f"f{warm.MIN_FILES - 1}.yaml").exists()  # it began with the last file
    with pytest.raises(ChildProcessError):
        os.waitpid(warming.pid, os.WNOHANG)  # reaped: no such child any more

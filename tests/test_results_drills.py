"""The results-path drills of benchmarks/results_drills.py, at test size: kill the worker
mid-batch, kill the harness mid-batch, and load from 8 processes (worker dev and workerd)."""

from __future__ import annotations

import pytest

from benchmarks import results_drills
from support.workerd_fixture import KEY as WORKERD_KEY


@pytest.mark.integration
def test_killing_worker_dev_under_8_runners_loses_and_duplicates_nothing(tmp_path):
    out = results_drills.drill_kill_worker(processes=8, runs=40, tmp=tmp_path)
    assert out["ok"], out
    assert out["lost"] == 0 and out["duplicated"] == 0 and out["outcomes"].get("spooled", 0) > 0


@pytest.mark.integration
@pytest.mark.parametrize("sandbox", ["auto", "none"])
def test_killing_the_harness_mid_batch_leaves_nothing_behind_after_the_next_command(tmp_path, sandbox):
    out = results_drills.drill_kill_harness(tmp_path, sandbox)
    assert out["ok"], out
    assert out["busyCommandsWhenKilled"] > 0  # it was killed in the middle of work


@pytest.mark.integration
def test_1000_posts_from_8_processes_to_worker_dev_are_stored_exactly_once(tmp_path):
    out = results_drills.drill_load(processes=8, posts=1000, tmp=tmp_path)
    assert out["ok"], out


@pytest.mark.integration
def test_posts_from_8_processes_to_workerd_are_stored_exactly_once(tmp_path, workerd_api):
    out = results_drills.drill_load(processes=8, posts=400, tmp=tmp_path, url=str(workerd_api.client.base_url),
                                    key=WORKERD_KEY)
    assert out["ok"], out

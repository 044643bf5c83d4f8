"""``bench --specialist`` and ``--mint-template``: resolution errors, stored specialist fields."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.cli.bench import main
from support.specialists import copy_shipped_templates


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ZE_BENCHMARKS_DB", str(tmp_path / "bench.db"))
    monkeypatch.setenv("ZE_BENCHMARKS_SPOOL_DIR", str(tmp_path / "spool"))
    monkeypatch.delenv("ZE_BENCHMARKS_WORKER_URL", raising=False)
    # A copy of the shipped templates: enriched copies a user made in templates/ must not count.
    monkeypatch.setenv("ZE_BENCHMARKS_TEMPLATES_DIR", str(copy_shipped_templates(tmp_path / "templates")))


@pytest.mark.parametrize("option", ["--specialist", "--mint-template"])
def test_unknown_template_is_bad_input_before_any_run(tmp_path, option):
    result = CliRunner().invoke(main, ["py-bugs", "pagination-off-by-one", option, "no-such-specialist"])
    assert result.exit_code == 2
    assert "no specialist template named 'no-such-specialist'" in result.output
    assert not (tmp_path / "bench.db").exists()


def test_specialist_run_is_stored_with_name_version_and_prompt_fingerprint(tmp_path):
    result = CliRunner().invoke(main, ["py-bugs", "pagination-off-by-one", "--agent", "echo",
                                       "--specialist", "@zebench/python-bugfixer", "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)["runs"][0]
    assert run["specialistEnabled"] is True
    assert (run["specialistName"], run["specialistVersion"]) == ("@zebench/python-bugfixer", "1.0.0")
    assert run["agent"] == "echo"  # an explicit --agent wins over the preferred model
    assert run["metadata"]["specialistTask"] == "py-bugs"
    assert run["metadata"]["specialistSource"] == "templates/python-bugfixer.json5"
    assert len(run["metadata"]["specialistPromptSha256"]) == 64

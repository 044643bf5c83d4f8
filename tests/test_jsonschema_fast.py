"""The one fast path of schema validation (harness/_util/jsonschema_fast.py) shared by the dataset
format and the fleet manifest, and what both make of NaN and infinities: JSON has neither, so a
field whose schema asks for a number refuses them, read from YAML or from JSON, by the fast
path and by jsonschema alike; a free-form mapping keeps them."""

from __future__ import annotations

import json
import math

import pytest

from harness.datasets import checks
from harness.datasets.format import load_file
from harness.datasets.model import DatasetError
from harness.fleet import manifest_checks
from harness.fleet.manifest import ManifestError, load_manifest
from harness._util.jsonschema_fast import is_count, is_json_number, is_number, suggestion, unknown_keys
from harness._util.jsonschemas import validate

NON_FINITE = {".nan": "nan", ".inf": "inf", "-.inf": "-inf"}


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))


def _dataset_yaml(path, temperature: str, metadata: str = "1") -> None:
    path.write_text(f"name: qa\ndefaults: {{temperature: {temperature}}}\nmetadata: {{x: {metadata}}}\n"
                    "test_cases:\n  - id: a\n    prompt: p\n", "utf-8")


def _manifest_yaml(path, temperature: str, metadata: str = "1") -> None:
    path.write_text(f"fleet_id: f\nmetadata: {{x: {metadata}}}\nrepositories: [{{repo_id: r, path: .}}]\n"
                    f"providers: ['openai:gpt-4o-mini']\n"
                    f"scenario_profiles: {{p: {{dataset: qa, settings: {{temperature: {temperature}}}}}}}\n",
                    "utf-8")


def _dataset_problems(path) -> list[str]:
    with pytest.raises(DatasetError) as err:
        load_file(path)
    return err.value.problems


def _manifest_problems(path) -> list[str]:
    with pytest.raises(ManifestError) as err:
        load_manifest(path)
    return err.value.problems


@pytest.mark.parametrize("spelling", list(NON_FINITE))
def test_a_non_finite_number_from_yaml_is_refused_by_the_dataset_and_the_manifest_alike(tmp_path, spelling):
    _dataset_yaml(tmp_path / "qa.yaml", spelling)
    _manifest_yaml(tmp_path / "fleet.yaml", spelling)
    message = f"{NON_FINITE[spelling]} is not of type 'number'"
    assert _dataset_problems(tmp_path / "qa.yaml") == [f"defaults.temperature: {message}"]
    assert _manifest_problems(tmp_path / "fleet.yaml") == [f"scenario_profiles.p.settings.temperature: {message}"]
    assert not list((tmp_path / "cache").rglob("*.json"))  # a refused dataset is never kept


def test_a_nan_from_json_is_refused_by_both_too(tmp_path):
    (tmp_path / "qa.json").write_text('{"name": "qa", "test_cases": [{"id": "a", "prompt": "p", "threshold": NaN}]}')
    (tmp_path / "fleet.json").write_text(json.dumps({
        "fleet_id": "f", "repositories": [{"repo_id": "r", "path": "."}], "providers": ["openai:gpt-4o-mini"],
        "global_settings": {"test_timeout_seconds": float("nan")}}))
    assert _dataset_problems(tmp_path / "qa.json") == ["test_cases[0].threshold: nan is not of type 'number'"]
    assert _manifest_problems(tmp_path / "fleet.json") == [
        "global_settings.test_timeout_seconds: nan is not of type 'number'"]


def test_a_finite_number_is_accepted_and_nan_in_free_form_metadata_is_kept_by_both(tmp_path):
    _dataset_yaml(tmp_path / "qa.yaml", "0.5", metadata=".nan")
    _manifest_yaml(tmp_path / "fleet.yaml", "0.5", metadata=".nan")
    dataset, manifest = load_file(tmp_path / "qa.yaml"), load_manifest(tmp_path / "fleet.yaml")
    assert dataset.defaults["temperature"] == 0.5 and math.isnan(dataset.metadata["x"])
    assert manifest.profiles["p"].settings["temperature"] == 0.5 and math.isnan(manifest.metadata["x"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_the_fast_paths_and_jsonschema_agree_on_non_finite_numbers(value):
    case = {"id": "a", "prompt": "p", "variables": {"n": value}}
    dataset = {"name": "qa", "version": value, "test_cases": [case]}
    assert not checks._plain_case(case) and not checks._plain_top(dataset)
    assert [i.field for i in validate("dataset", dataset)] == ["test_cases[0].variables.n", "version"]
    assert checks._schema_issues(dataset) == validate("dataset", dataset)
    manifest = {"fleet_id": "f", "repositories": [{"repo_id": "r", "path": "."}], "providers": ["openai:gpt"],
                "scenario_profiles": {"p": {"request_delay_ms": value, "settings": {"top_p": value}}}}
    assert not manifest_checks._plain_top(manifest)
    assert [i.field for i in validate("fleet", manifest)] == ["scenario_profiles.p.request_delay_ms",
                                                              "scenario_profiles.p.settings.top_p"]
    assert manifest_checks._schema_issues(manifest) == validate("fleet", manifest)


def test_the_shared_predicates():
    assert is_json_number(0) and is_json_number(-1.5) and is_json_number(10 ** 400)  # a big int is finite
    assert not any(is_json_number(v) for v in (True, float("nan"), float("inf"), "1", None))
    assert is_number(1, 0, 2) and not is_number(3, 0, 2) and not is_number(0, above=0)
    assert not is_number(float("nan"), 0) and not is_number(float("inf"), 0)
    assert is_count(1) and not is_count(0) and not is_count(1.0) and not is_count(True) and is_count(0, 0, 20)
    assert unknown_keys("unknown key(s) are not allowed ('a', 'b' were unexpected)") == ["a", "b"]
    assert unknown_keys("'x' is not of type 'string'") == []
    assert suggestion("nmae", ("name", "version")) == " (did you mean 'name'?)"
    assert suggestion("zzz", ("name",)) == " (allowed: name)" and suggestion("zzz", ()) == ""

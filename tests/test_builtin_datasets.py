"""The built-in datasets prove their own grading: every case holds, in its metadata, an answer a
good model would give (``sample_pass``) and a plausible wrong or non-compliant one
(``sample_fail``), and the real grader must pass the first and fail the second.

That catches what reading the YAML does not: a regex too strict for a harmless variation of a
correct answer, a reference the good answer does not contain, a word limit the sample exceeds,
or assertions so loose that a wrong answer slips through. Grading runs without a judge, so the
llm-rubric assertions are skipped and the deterministic ones alone must decide every case.
"""

from __future__ import annotations

import pytest

from harness.datasets.assertion_types import DETERMINISTIC, Answer, Grade
from harness.datasets.assertions import grade
from harness.datasets.format import builtin_datasets, load_dataset
from harness.datasets.model import Dataset, TestCase

EXPECTED = ("coding", "creative-writing", "instruction-following", "reasoning", "summarization")
ZERO_TEMPERATURE = ("coding", "instruction-following", "reasoning")
MIN_CASES = 10

NAMES = [info.name for info in builtin_datasets()]


def _load(name: str) -> Dataset:
    return load_dataset(name)


def _explain(case: TestCase, result: Grade) -> str:
    """One line per assertion, so a failure says which check disagreed with the sample."""
    lines = [f"{case.id}: passed={result.passed} score={result.score}"]
    for r in result.results:
        state = "skipped" if r.skipped else ("ok" if r.passed else "FAILED")
        lines.append(f"    {r.type} {state} score={r.score} threshold={r.threshold}: {r.detail}")
    return "\n".join(lines)


def test_the_five_builtin_datasets_are_listed():
    assert set(EXPECTED) <= set(NAMES), f"missing built-in datasets: {sorted(set(EXPECTED) - set(NAMES))}"
    assert NAMES == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_builtin_dataset_loads_with_enough_cases(name):
    dataset = _load(name)
    info = next(i for i in builtin_datasets() if i.name == name)
    assert dataset.name == name
    assert dataset.source == f"builtin:{name}"
    assert dataset.version == "1.0.0"
    assert dataset.description.strip() and "\n" not in dataset.description
    assert len(dataset.cases) >= MIN_CASES
    assert info.cases == len(dataset.cases)
    assert info.description == dataset.description
    assert len({case.category for case in dataset.cases}) >= 2, "cases should span several categories"
    assert all(case.category != "uncategorized" for case in dataset.cases)
    for case in dataset.cases:
        assert "{{" not in case.prompt and "{{" not in case.id, f"{case.id}: unrendered placeholder"


@pytest.mark.parametrize("name", [n for n in ZERO_TEMPERATURE if n in NAMES])
def test_deterministic_tasks_run_at_temperature_zero(name):
    dataset = _load(name)
    assert all(case.temperature == 0 for case in dataset.cases)
    assert all(case.max_tokens for case in dataset.cases)


def test_builtin_datasets_use_variables():
    templated = [case.id for name in EXPECTED for case in _load(name).cases if case.variables]
    assert len(templated) >= 5, templated


@pytest.mark.parametrize("name", NAMES)
def test_every_case_is_graded_deterministically(name):
    """A judge is optional, so no case may depend on one; the rubric weighs less than the facts."""
    for case in _load(name).cases:
        deterministic = [a for a in case.asserts if a.type in DETERMINISTIC]
        assert deterministic, f"{case.id}: no deterministic assertion"
        rubrics = [a for a in case.asserts if a.type == "llm-rubric"]
        for rubric in rubrics:
            assert rubric.weight < min(a.weight for a in deterministic), (
                f"{case.id}: the llm-rubric must weigh less than every deterministic assertion")


@pytest.mark.parametrize("name", NAMES)
def test_every_case_has_both_samples(name):
    for case in _load(name).cases:
        for key in ("sample_pass", "sample_fail"):
            sample = case.metadata.get(key)
            assert isinstance(sample, str) and sample.strip(), f"{case.id}: metadata.{key} is missing"
        assert case.metadata["sample_pass"] != case.metadata["sample_fail"], case.id


@pytest.mark.parametrize("name", NAMES)
def test_passing_samples_pass(name):
    failures = []
    for case in _load(name).cases:
        result = grade(case, Answer(text=case.metadata["sample_pass"]))
        assert all(r.skipped for r in result.results if r.type == "llm-rubric"), (
            f"{case.id}: llm-rubric must be skipped without a judge")
        if result.passed is not True:
            failures.append(_explain(case, result))
    assert not failures, "sample_pass answers that do not pass:\n" + "\n".join(failures)


@pytest.mark.parametrize("name", NAMES)
def test_failing_samples_fail(name):
    failures = []
    for case in _load(name).cases:
        result = grade(case, Answer(text=case.metadata["sample_fail"]))
        if result.passed is not False:
            failures.append(_explain(case, result))
    assert not failures, "sample_fail answers that do not fail:\n" + "\n".join(failures)

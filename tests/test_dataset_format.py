"""The dataset file format of ``bench dataset`` (harness/datasets/format.py): reading JSON,
YAML, JSONL and CSV, the schema and the checks beyond it (every problem reported at once,
named by file and field), templating, and the resolution of defaults into test cases."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft202012Validator

from harness.datasets import checked_cache, checks, readers
from harness.datasets import format as fmt
from harness.datasets.checks import parse_dataset
from harness.datasets.format import builtin_datasets, load_dataset
from harness.datasets.model import Assertion, BuiltinInfo, DatasetError, MissingVariablesError, placeholders, render
from harness._util.jsonschemas import load_schema, validate

ROOT = Path(__file__).resolve().parents[1]

# The example dataset of the original tool, as it was written for it.
ORIGINAL_JSON = """{
  "name": "coding-tasks",
  "description": "Basic coding challenges",
  "version": "1.0.0",
  "defaults": {"temperature": 0.0, "max_tokens": 500},
  "test_cases": [
    {
      "id": "fizzbuzz-python",
      "category": "coding",
      "prompt": "Write a Python function that implements FizzBuzz for numbers 1 to {{n}}.",
      "variables": {"n": "100"},
      "expected": "def fizzbuzz",
      "references": ["for i in range", "if i % 15", "FizzBuzz"]
    },
    {
      "id": "fibonacci-{{lang}}",
      "category": "coding",
      "prompt": "Implement a {{lang}} function to calculate the nth Fibonacci number.",
      "variables": {"lang": "JavaScript"},
      "references": ["function", "fibonacci"]
    }
  ]
}
"""

# The same dataset in YAML, keys in another order, version unquoted.
ORIGINAL_YAML = """\
name: coding-tasks
version: 1.0.0
description: Basic coding challenges
defaults:
  max_tokens: 500
  temperature: 0.0
test_cases:
  - id: fizzbuzz-python
    category: coding
    prompt: "Write a Python function that implements FizzBuzz for numbers 1 to {{n}}."
    variables:
      n: "100"
    expected: def fizzbuzz
    references:
      - for i in range
      - if i % 15
      - FizzBuzz
  - category: coding
    id: fibonacci-{{lang}}
    variables: {lang: JavaScript}
    prompt: Implement a {{lang}} function to calculate the nth Fibonacci number.
    references: [function, fibonacci]
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def dataset(*cases: dict, **top) -> dict:
    """A minimal valid document with these cases (one simple case when none are given)."""
    return {"name": "t", **top, "test_cases": list(cases) or [{"id": "a", "prompt": "Say hi"}]}


def problems_of(document, source="d.yaml") -> list[str]:
    with pytest.raises(DatasetError) as caught:
        parse_dataset(document, source)
    assert caught.value.source == source
    return caught.value.problems


def assertions_module():
    return pytest.importorskip("harness.datasets.assertions")


# --- the original tool's datasets ----------------------------------------------------------------

def test_the_original_tools_json_dataset_loads_unchanged(tmp_path):
    ds = load_dataset(write(tmp_path / "coding.json", ORIGINAL_JSON))
    assert (ds.name, ds.version, ds.description) == ("coding-tasks", "1.0.0", "Basic coding challenges")
    assert ds.source == str(tmp_path / "coding.json")
    assert [c.id for c in ds.cases] == ["fizzbuzz-python", "fibonacci-JavaScript"]
    fizz, fib = ds.cases
    assert fizz.prompt == "Write a Python function that implements FizzBuzz for numbers 1 to 100."
    assert fizz.template.endswith("1 to {{n}}.")
    assert fizz.variables == {"n": "100"} and fizz.category == "coding"
    assert fizz.expected == "def fizzbuzz"
    assert fizz.references == ["for i in range", "if i % 15", "FizzBuzz"]
    assert fizz.asserts == [Assertion("icontains", "def fizzbuzz", implicit=True)]
    assert (fizz.temperature, fizz.max_tokens, fizz.top_p, fizz.stop) == (0.0, 500, None, None)
    assert (fizz.repeat, fizz.threshold, fizz.system, fizz.model) == (1, None, None, None)
    assert fib.prompt == "Implement a JavaScript function to calculate the nth Fibonacci number."
    assert fib.expected is None and fib.asserts == [] and (fizz.index, fib.index) == (0, 1)


def test_the_same_dataset_in_yaml_loads_the_same_with_the_same_digest(tmp_path):
    from_json = load_dataset(write(tmp_path / "coding.json", ORIGINAL_JSON))
    from_yaml = load_dataset(write(tmp_path / "coding.yaml", ORIGINAL_YAML))
    from_yml = load_dataset(write(tmp_path / "coding.yml", ORIGINAL_YAML))
    assert from_yaml.version == "1.0.0"
    assert from_yaml.cases == from_json.cases == from_yml.cases
    assert from_yaml.digest == from_json.digest == from_yml.digest
    assert len(from_json.digest) == 12 and int(from_json.digest, 16) >= 0


def test_the_digest_ignores_key_order_and_follows_the_content():
    document = json.loads(ORIGINAL_JSON)
    reordered = {key: document[key] for key in reversed(list(document))}
    reordered["test_cases"] = [dict(reversed(list(case.items()))) for case in document["test_cases"]]
    assert parse_dataset(reordered, "a").digest == parse_dataset(document, "b").digest
    changed = copy.deepcopy(document)
    changed["test_cases"][0]["variables"]["n"] = "50"
    assert parse_dataset(changed, "c").digest != parse_dataset(document, "b").digest


@pytest.mark.parametrize(("written", "read"), [
    ("1.0.0", "1.0.0"), ("1.10", "1.10"), ("2", "2"), ("'3.0'", "3.0"), ("2024-05-01", "2024-05-01")])
def test_a_yaml_version_is_read_as_written(tmp_path, written, read):
    path = write(tmp_path / "v.yaml", f"name: v\nversion: {written}\ntest_cases: [{{id: a, prompt: hi}}]\n")
    assert load_dataset(path).version == read


def test_version_defaults_to_1_and_json_numbers_become_text():
    assert parse_dataset(dataset(), "s").version == "1"
    assert parse_dataset(dataset(version=2), "s").version == "2"


def test_yaml_dates_in_metadata_stay_text_as_in_json(tmp_path):
    path = write(tmp_path / "m.yaml", "name: m\nmetadata: {created: 2024-05-01}\ntest_cases: [{id: a, prompt: hi}]\n")
    assert load_dataset(path).metadata == {"created": "2024-05-01"}


# --- templating ----------------------------------------------------------------------------------

def test_render_fills_both_placeholder_spellings():
    assert render("{{a}} and {{ a }} and {{  b}}", {"a": "x", "b": "y"}) == "x and x and y"
    assert render("no placeholders {{ }} {x}", {}) == "no placeholders {{ }} {x}"
    assert render("{{n}} {{f}} {{t}} {{off}}", {"n": 3, "f": 0.5, "t": True, "off": False}) == "3 0.5 true false"


def test_placeholders_lists_each_name_once_in_order():
    assert placeholders("{{b}} {{ a }} {{b}} {{c-d}} {{e.f}}") == ["b", "a", "c-d", "e.f"]


def test_render_names_every_missing_variable():
    with pytest.raises(MissingVariablesError) as caught:
        render("{{a}} {{ b }} {{c}} {{a}}", {"c": 1})
    assert isinstance(caught.value, ValueError)
    assert caught.value.names == ["a", "b"]
    assert "a, b" in str(caught.value)


def test_variables_of_any_scalar_type_render_as_text():
    case = {"id": "v-{{n}}", "prompt": "{{ n }} {{flag}} {{ratio}}", "variables": {"n": 7, "flag": True, "ratio": 0.25}}
    loaded = parse_dataset(dataset(case), "s").cases[0]
    assert (loaded.id, loaded.prompt) == ("v-7", "7 true 0.25")
    assert loaded.variables == {"n": "7", "flag": "true", "ratio": "0.25"}


# --- errors: every problem, named by field -------------------------------------------------------

def test_the_error_names_the_file_and_lists_every_problem():
    document = dataset({"id": "a", "prompt": "{{x}}"}, {"prompt": "p"})
    with pytest.raises(DatasetError) as caught:
        parse_dataset(document, "suite/cases.yaml")
    text = str(caught.value)
    assert text.startswith("suite/cases.yaml: 2 problems:\n")
    assert "\n  test_cases[0].prompt: undefined variable x (the case has no variables)" in text
    assert "\n  test_cases[1].id: is required" in text
    assert isinstance(caught.value, ValueError)


def test_missing_required_fields():
    problems = problems_of({"test_cases": [{"category": "c"}]})
    assert problems == ["name: is required", "test_cases[0].id: is required", "test_cases[0].prompt: is required"]


def test_a_top_level_that_is_not_an_object():
    assert problems_of(["a"]) == ["(top level): ['a'] is not of type 'object'"]


def test_wrong_types_are_named_by_their_path():
    problems = problems_of(dataset(
        {"id": "a", "prompt": "p", "repeat": "two", "references": "r", "variables": {"v": None}},
        defaults={"temperature": "hot", "max_tokens": 0}))
    assert problems == [
        "defaults.max_tokens: 0 is less than the minimum of 1",
        "defaults.temperature: 'hot' is not of type 'number'",
        "test_cases[0].references: 'r' is not of type 'array'",
        "test_cases[0].repeat: 'two' is not of type 'integer'",
        "test_cases[0].variables.v: None is not of type 'string', 'number', 'boolean'",
    ]


def test_unknown_keys_are_errors_named_by_their_own_path_with_a_suggestion():
    problems = problems_of(dataset(
        {"id": "a", "promt": "p", "config": {"modle": "m"}, "assert": [{"type": "contains", "value": "x", "wieght": 2}]},
        descripton="d", defaults={"temprature": 0, "zzz": 1}))
    assert problems == [
        "defaults.temprature: unknown key (did you mean 'temperature'?)",
        "defaults.zzz: unknown key (allowed: temperature, max_tokens, top_p, stop, system, threshold)",
        "descripton: unknown key (did you mean 'description'?)",
        "test_cases[0].assert[0].wieght: unknown key (did you mean 'weight'?)",
        "test_cases[0].config.modle: unknown key (did you mean 'model'?)",
        "test_cases[0].prompt: is required",
        "test_cases[0].promt: unknown key (did you mean 'prompt'?)",
    ]


def test_metadata_and_variables_take_any_key():
    case = {"id": "a", "prompt": "{{anything}}", "variables": {"anything": "x"}, "metadata": {"free": {"form": [1]}}}
    loaded = parse_dataset(dataset(case, metadata={"owner": "me", "tags": ["x"]}), "s")
    assert loaded.metadata == {"owner": "me", "tags": ["x"]}
    assert loaded.cases[0].metadata == {"free": {"form": [1]}}


def test_empty_test_cases_and_blank_prompts():
    assert problems_of({"name": "t", "test_cases": []}) == ["test_cases: [] should be non-empty"]
    assert problems_of(dataset({"id": "a", "prompt": " \n "})) == ["test_cases[0].prompt: must not be blank"]
    assert problems_of(dataset({"id": "", "prompt": "p"})) == ["test_cases[0].id: '' should be non-empty"]


def test_duplicate_ids_are_found_after_rendering():
    problems = problems_of(dataset(
        {"id": "fib-{{lang}}", "prompt": "{{lang}}", "variables": {"lang": "js"}},
        {"id": "fib-js", "prompt": "p"},
        {"id": "other", "prompt": "p"},
        {"id": "fib-{{ lang }}", "prompt": "p", "variables": {"lang": "js"}}))
    assert problems == [
        "test_cases[1].id: duplicate id 'fib-js' (also test_cases[0])",
        "test_cases[3].id: duplicate id 'fib-js' (also test_cases[0])",
    ]


def test_every_missing_variable_of_every_case_is_reported():
    problems = problems_of(dataset(
        {"id": "a-{{lang}}-{{level}}", "prompt": "{{task}} in {{ lang }}", "variables": {"level": "1"}},
        {"id": "b", "prompt": "fine {{x}}", "variables": {"x": "1"}},
        {"id": "c-{{q}}", "prompt": "{{ q }} {{r}}"}))
    assert problems == [
        "test_cases[0].id: undefined variable lang (the case defines level)",
        "test_cases[0].prompt: undefined variables task, lang (the case defines level)",
        "test_cases[2].id: undefined variable q (the case has no variables)",
        "test_cases[2].prompt: undefined variables q, r (the case has no variables)",
    ]


def test_problems_are_sorted_by_case_number_not_as_text():
    cases = [{"id": f"c{i}", "prompt": "p"} for i in range(12)]
    cases[2]["prompt"] = cases[11]["prompt"] = ""
    problems = problems_of(dataset(*cases))
    assert [p.split(".")[0] for p in problems] == ["test_cases[2]", "test_cases[11]"]


def test_a_long_list_of_problems_is_cut_in_the_message_but_kept_whole():
    cases = [{"id": f"c{i}", "prompt": "{{v}}"} for i in range(80)]
    with pytest.raises(DatasetError) as caught:
        parse_dataset(dataset(*cases), "big.json")
    assert len(caught.value.problems) == 80
    assert str(caught.value).startswith("big.json: 80 problems:")
    assert str(caught.value).endswith("... and 30 more")


# --- assertions ----------------------------------------------------------------------------------

def test_assertions_resolve_with_the_expected_shorthand_first():
    case = {"id": "a", "prompt": "p", "expected": "Paris", "references": ["x", "y"], "assert": [
        {"type": "regex", "value": "^P", "weight": 2},
        {"type": "references", "threshold": 0.5},
        {"type": "references", "value": ["z"]},
        {"type": "is-json"},
        {"type": "llm-rubric", "value": "is polite"},
        {"type": "max-words", "value": 5},
        {"type": "json-schema", "value": {"type": "object"}},
        {"type": "latency-ms", "value": 1500},
        {"type": "cost", "value": 0}]}
    asserts = parse_dataset(dataset(case), "s").cases[0].asserts
    assert asserts[:4] == [
        Assertion("icontains", "Paris", implicit=True),
        Assertion("regex", "^P", weight=2.0),
        Assertion("references", ["x", "y"], threshold=0.5),
        Assertion("references", ["z"]),
    ]
    assert [a.type for a in asserts[4:]] == ["is-json", "llm-rubric", "max-words", "json-schema", "latency-ms", "cost"]
    assert asserts[0].to_dict() == {"type": "icontains", "value": "Paris", "implicit": True}
    assert asserts[1].to_dict() == {"type": "regex", "value": "^P", "weight": 2.0}
    assert asserts[4].to_dict() == {"type": "is-json"}


def test_an_empty_expected_is_no_assertion():
    case = parse_dataset(dataset({"id": "a", "prompt": "p", "expected": ""}), "s").cases[0]
    assert (case.expected, case.asserts) == (None, [])


def test_assertion_value_shapes_are_checked_per_type():
    problems = problems_of(dataset({"id": "a", "prompt": "p", "assert": [
        {"type": "contains"},
        {"type": "is-json", "value": "x"},
        {"type": "max-words", "value": "3"},
        {"type": "max-chars", "value": 0},
        {"type": "regx", "value": "a"},
        {"type": "json-schema", "value": "object"},
        {"type": "latency-ms", "value": 0},
        {"type": "cost", "value": -1},
        {"type": "llm-rubric", "value": ""},
        {"type": "equals", "value": 3},
        {"type": "references", "value": []},
        {"type": "contains", "value": "x", "weight": 0, "threshold": 2},
    ]}))
    assert problems == [
        "test_cases[0].assert[0].value: is required",
        "test_cases[0].assert[1].value: is not allowed: this assertion type takes no value",
        "test_cases[0].assert[2].value: '3' is not of type 'integer'",
        "test_cases[0].assert[3].value: 0 is less than the minimum of 1",
        "test_cases[0].assert[4].type: unknown assertion type 'regx' (did you mean 'regex'?)",
        "test_cases[0].assert[5].value: 'object' is not of type 'object'",
        "test_cases[0].assert[6].value: 0 is less than or equal to the minimum of 0",
        "test_cases[0].assert[7].value: -1 is less than the minimum of 0",
        "test_cases[0].assert[8].value: '' should be non-empty",
        "test_cases[0].assert[9].value: 3 is not of type 'string'",
        "test_cases[0].assert[10].value: [] should be non-empty",
        "test_cases[0].assert[11].threshold: 2 is greater than the maximum of 1",
        "test_cases[0].assert[11].weight: 0 is less than or equal to the minimum of 0",
    ]


def test_a_references_assertion_needs_references():
    problems = problems_of(dataset({"id": "a", "prompt": "p", "assert": [{"type": "references"}]},
                                   {"id": "b", "prompt": "p", "references": [], "assert": [{"type": "references"}]}))
    assert problems == [
        "test_cases[0].assert[0]: a references assertion needs a value, or references in its case",
        "test_cases[1].assert[0]: a references assertion needs a value, or references in its case",
    ]


def test_a_bad_regex_and_a_bad_json_schema_are_found_at_load_time():
    assertions_module()
    problems = problems_of(dataset({"id": "a", "prompt": "p", "assert": [
        {"type": "regex", "value": "([a-z"},
        {"type": "regex", "value": "fine"},
        {"type": "json-schema", "value": {"type": "no-such-type"}}]}))
    assert [p.split(":")[0] for p in problems] == ["test_cases[0].assert[0].value", "test_cases[0].assert[2].value"]


def test_the_schema_lists_the_same_assertion_types_as_the_grader():
    from harness.datasets.assertion_types import ASSERTION_TYPES

    enum = load_schema("dataset")["$defs"]["assertion"]["properties"]["type"]["enum"]
    assert sorted(enum) == sorted(ASSERTION_TYPES)


# --- resolution ----------------------------------------------------------------------------------

def test_generation_settings_come_from_config_over_defaults():
    document = dataset(
        {"id": "a", "prompt": "p"},
        {"id": "b", "prompt": "p", "config": {"model": "openai:gpt-4o", "temperature": 1, "stop": ["END", "STOP"]}},
        defaults={"temperature": 0.2, "max_tokens": 300, "top_p": 0.9, "stop": "\n\n"})
    a, b = parse_dataset(document, "s").cases
    assert (a.model, a.temperature, a.max_tokens, a.top_p, a.stop) == (None, 0.2, 300, 0.9, ["\n\n"])
    assert (b.model, b.temperature, b.max_tokens, b.top_p, b.stop) == ("openai:gpt-4o", 1.0, 300, 0.9, ["END", "STOP"])
    assert isinstance(b.temperature, float)


def test_the_system_prompt_is_the_cases_else_the_datasets_else_the_defaults():
    cases = ({"id": "a", "prompt": "p", "system": "case"}, {"id": "b", "prompt": "p"})
    both = parse_dataset(dataset(*cases, system="dataset", defaults={"system": "defaults"}), "s").cases
    assert [c.system for c in both] == ["case", "dataset"]
    only_defaults = parse_dataset(dataset(*cases, defaults={"system": "defaults"}), "s").cases
    assert [c.system for c in only_defaults] == ["case", "defaults"]
    assert parse_dataset(dataset(cases[1]), "s").cases[0].system is None


def test_repeat_and_threshold():
    document = dataset(
        {"id": "a", "prompt": "p", "repeat": 3, "threshold": 0.5},
        {"id": "b", "prompt": "p"},
        defaults={"threshold": 0.8})
    a, b = parse_dataset(document, "s").cases
    assert (a.repeat, a.threshold, b.repeat, b.threshold) == (3, 0.5, 1, 0.8)
    assert parse_dataset(dataset(), "s").cases[0].threshold is None
    assert problems_of(dataset({"id": "a", "prompt": "p", "repeat": 0, "threshold": 1.5})) == [
        "test_cases[0].repeat: 0 is less than the minimum of 1",
        "test_cases[0].threshold: 1.5 is greater than the maximum of 1",
    ]


def test_category_defaults_to_uncategorized():
    assert parse_dataset(dataset(), "s").cases[0].category == "uncategorized"


# --- files ---------------------------------------------------------------------------------------

def test_malformed_yaml_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "bad.yaml", "name: x\ntest_cases:\n  - id: a\n    prompt: [unclosed\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert caught.value.source == str(path)
    [problem] = caught.value.problems
    assert problem.startswith("line 5, column 1: invalid YAML:")
    assert str(caught.value).startswith(f"{path}: 1 problem:")


def test_malformed_json_names_the_file_and_line(tmp_path):
    path = write(tmp_path / "bad.json", '{"name": "x",\n "test_cases": [\n  {"id": "a",}\n]}\n')
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert caught.value.source == str(path)
    assert caught.value.problems == ["line 3, column 14: invalid JSON: Expecting property name enclosed in double quotes"]


def test_an_empty_file_and_an_unknown_extension(tmp_path):
    with pytest.raises(DatasetError, match="empty file"):
        load_dataset(write(tmp_path / "empty.yaml", "# nothing\n"))
    with pytest.raises(DatasetError, match=r"unsupported extension '\.txt'"):
        load_dataset(write(tmp_path / "cases.txt", "{}"))


def test_jsonl_cases(tmp_path):
    path = write(tmp_path / "smoke.jsonl",
                 '{"id": "a", "prompt": "Say {{w}}", "variables": {"w": "hi"}, "expected": "hi"}\n'
                 "\n"
                 '{"id": "b", "prompt": "Count to 3", "assert": [{"type": "regex", "value": "1.*2.*3"}]}\n')
    ds = load_dataset(path)
    assert (ds.name, ds.version, ds.description) == ("smoke", "1", "")
    assert [(c.id, c.prompt) for c in ds.cases] == [("a", "Say hi"), ("b", "Count to 3")]
    assert ds.cases[1].asserts == [Assertion("regex", "1.*2.*3")]


def test_jsonl_problems_give_the_line(tmp_path):
    bad_json = write(tmp_path / "a.jsonl", '{"id": "a", "prompt": "p"}\n{"id": \n{"id": "c", "prompt": "p"}\n[1\n')
    with pytest.raises(DatasetError) as caught:
        load_dataset(bad_json)
    assert [p.split(":")[0] for p in caught.value.problems] == ["line 2, column 8", "line 4, column 3"]
    bad_case = write(tmp_path / "b.jsonl", '{"id": "a", "prompt": "p"}\n\n{"id": "b", "promt": "p"}\n')
    with pytest.raises(DatasetError) as caught:
        load_dataset(bad_case)
    assert caught.value.problems == [
        "test_cases[1].prompt: is required (line 3)",
        "test_cases[1].promt: unknown key (did you mean 'prompt'?) (line 3)",
    ]


def test_csv_cases(tmp_path):
    path = write(tmp_path / "capitals.csv",
                 "id,category,prompt,expected,references,system,repeat,var:country\n"
                 'cap-{{country}},geo,"What is the capital of {{ country }}?",Paris,Paris | France,,2,France\n'
                 ",,,,,,,\n"
                 'plain,,"A prompt, with a comma\nand a newline",,,Be brief.,,\n')
    ds = load_dataset(path)
    assert (ds.name, ds.version) == ("capitals", "1")
    first, second = ds.cases
    assert (first.id, first.category, first.prompt) == ("cap-France", "geo", "What is the capital of France?")
    assert (first.references, first.repeat, first.variables) == (["Paris", "France"], 2, {"country": "France"})
    assert first.asserts == [Assertion("icontains", "Paris", implicit=True)]
    assert (second.id, second.category, second.prompt) == ("plain", "uncategorized", "A prompt, with a comma\nand a newline")
    assert (second.system, second.references, second.repeat, second.asserts) == ("Be brief.", [], 1, [])


def test_csv_problems_name_the_column_or_the_line(tmp_path):
    with pytest.raises(DatasetError) as caught:
        load_dataset(write(tmp_path / "a.csv", "id,promt,var:,expected,id\na,b,c,d,e\n"))
    assert caught.value.problems == [
        "columns[1]: unknown column 'promt' (did you mean 'prompt'?)",
        "columns[2]: unknown column 'var:' (did you mean 'var:NAME'?)",
        "columns[4]: duplicate column 'id'",
    ]
    with pytest.raises(DatasetError) as caught:
        load_dataset(write(tmp_path / "b.csv", "id,prompt,repeat\na,p,1\nb,\"two\nlines\",x\nc,{{v}},1\nd,p,1,extra\n"))
    assert caught.value.problems == ["line 6: 4 cells, but the header has 3 columns"]
    with pytest.raises(DatasetError) as caught:
        load_dataset(write(tmp_path / "c.csv", "id,prompt,repeat\na,p,1\nb,\"two\nlines\",x\nc,{{v}},1\n"))
    assert caught.value.problems == [
        "test_cases[1].repeat: 'x' is not of type 'integer' (line 3)",
        "test_cases[2].prompt: undefined variable v (the case has no variables) (line 5)",
    ]
    with pytest.raises(DatasetError, match="empty file"):
        load_dataset(write(tmp_path / "d.csv", ""))


# --- finding datasets ----------------------------------------------------------------------------

def test_a_path_that_does_not_exist(tmp_path):
    for ref in (tmp_path / "nope.yaml", str(tmp_path / "nope"), "nope.json", "sub/nope"):
        with pytest.raises(DatasetError) as caught:
            load_dataset(ref)
        assert caught.value.problems == ["no such file"], ref
    with pytest.raises(DatasetError, match="is a directory"):
        load_dataset(tmp_path)


def test_built_in_datasets_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "builtin_dir", lambda: tmp_path)
    write(tmp_path / "zeta.yaml", "name: zeta\ndescription: Last one\ntest_cases: [{id: a, prompt: p}, {id: b, prompt: q}]\n")
    write(tmp_path / "alpha.json", '{"name": "alpha", "test_cases": [{"id": "a", "prompt": "p"}]}')
    write(tmp_path / "notes.txt", "not a dataset")
    assert builtin_datasets() == [
        BuiltinInfo("alpha", "", 1, tmp_path / "alpha.json"),
        BuiltinInfo("zeta", "Last one", 2, tmp_path / "zeta.yaml"),
    ]
    ds = load_dataset("zeta")
    assert (ds.name, ds.source, len(ds.cases)) == ("zeta", "builtin:zeta", 2)
    with pytest.raises(DatasetError) as caught:
        load_dataset("nosuch")
    assert caught.value.source == "nosuch"
    assert caught.value.problems == ["no such file, and no built-in dataset of that name (built-in: alpha, zeta)"]


def test_a_broken_built_in_dataset_is_reported_with_its_file(tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "builtin_dir", lambda: tmp_path)
    write(tmp_path / "broken.yaml", "name: broken\ntest_cases: [{id: a}]\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset("broken")
    assert caught.value.source == str(tmp_path / "broken.yaml")
    assert caught.value.problems == ["test_cases[0].prompt: is required"]


def test_the_shipped_built_in_datasets_load():
    for info in builtin_datasets():
        ds = load_dataset(info.name)
        assert (ds.source, len(ds.cases)) == (f"builtin:{info.name}", info.cases)


def test_a_directory_named_like_a_built_in_dataset_does_not_hide_it(tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "builtin_dir", lambda: tmp_path / "builtin")
    (tmp_path / "builtin").mkdir()
    write(tmp_path / "builtin" / "qa.yaml", "name: qa\ntest_cases: [{id: a, prompt: p}]\n")
    (tmp_path / "qa").mkdir()
    (tmp_path / "other").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_dataset("qa").source == "builtin:qa"
    with pytest.raises(DatasetError, match="is a directory"):
        load_dataset("other")


def test_no_built_in_directory_means_no_built_in_datasets(tmp_path, monkeypatch):
    monkeypatch.setattr(fmt, "builtin_dir", lambda: tmp_path / "missing")
    assert builtin_datasets() == []
    with pytest.raises(DatasetError, match=r"\(built-in: none\)"):
        load_dataset("anything")


# --- the schema and its fast path ----------------------------------------------------------------

def test_the_schema_is_a_valid_draft_2020_12_schema_with_its_id():
    schema = load_schema("dataset")
    Draft202012Validator.check_schema(schema)
    assert schema["$id"] == "https://zebench.dev/schemas/dataset.schema.json"
    assert validate("dataset", json.loads(ORIGINAL_JSON)) == []


def _random_mutants(base: dict, keys: list, values: list, rng: random.Random, *, count: int,
                    changes: int) -> list[dict]:
    """``count`` copies of ``base``, each with ``changes`` of ``keys`` set to one of ``values``."""
    out = []
    for _ in range(count):
        item = copy.deepcopy(base)
        for key in rng.sample(keys, changes):
            item[key] = rng.choice(values)
        out.append(item)
    return out

def test_the_fast_path_never_accepts_a_case_the_schema_refuses():
    """Cases the plain-Python check vouches for skip jsonschema; it must never be laxer."""
    odd_values = [None, "", " ", "x", "\n", 0, -1, 1, 0.5, 1.5, 2, True, False, float("nan"), [], [""], ["x"],
                  [1], {}, {"a": None}, {"a": "x"}, {"type": "object"}, {"model": ""}, {"stop": [1]}]
    base = {"id": "a", "category": "c", "prompt": "p {{v}}", "variables": {"v": "1"}, "expected": "e",
            "references": ["r"], "config": {"model": "m", "temperature": 0, "max_tokens": 5, "top_p": 1, "stop": "s"},
            "metadata": {}, "system": "s", "repeat": 1, "threshold": 1,
            "assert": [{"type": "contains", "value": "x", "weight": 1, "threshold": 0}]}
    assertion_keys = ("type", "value", "weight", "threshold")
    kinds = load_schema("dataset")["$defs"]["assertion"]["properties"]["type"]["enum"]
    rng = random.Random(7)
    candidates = []
    for key in [*base, "other"]:
        for value in odd_values:
            candidates.append({**base, key: value})
    for key in ("model", "temperature", "max_tokens", "top_p", "stop", "other"):
        for value in odd_values:
            candidates.append({**base, "config": {key: value}})
    for kind in [*kinds, "nope"]:
        for key in assertion_keys:
            for value in odd_values:
                candidates.append({**base, "assert": [{"type": kind, key: value}]})
                candidates.append({**base, "assert": [{"type": kind, "value": value, key: value}]})
        candidates.append({**base, "assert": [{"type": kind}]})
    candidates += _random_mutants(base, list(base), odd_values, rng, count=2000, changes=3)
    vouched = 0
    for case in candidates:
        if checks._plain_case(case):
            vouched += 1
            assert validate("dataset", {"name": "t", "test_cases": [case]}) == [], case
    assert vouched > 100  # the fast path is taken for ordinary cases
    assert checks._plain_case(base)
    assert set(checks._VALUE_RULES) == set(kinds)


def test_the_fast_path_never_accepts_a_document_the_schema_refuses():
    """A document whose keys the plain-Python check vouches for (its cases plain too) skips
    jsonschema altogether; it must never be laxer than the schema about those keys."""
    odd_values = [None, "", " ", "x", 0, -1, 1, 0.5, 1.5, True, False, float("nan"), [], ["x"], [1], {},
                  {"a": 1}, {"temperature": -1}, {"max_tokens": 0}, {"top_p": 2}, {"stop": [1]}, {"stop": ["s"]},
                  {"system": 1}, {"threshold": 1.5}, {"threshold": 0.5}, {"other": 1}, {"temperature": True}]
    case = {"id": "a", "prompt": "p"}
    base = {"$schema": "s", "name": "t", "version": "1.0", "description": "d", "metadata": {"k": "v"},
            "system": "s", "defaults": {"temperature": 0, "max_tokens": 5, "top_p": 1, "stop": "s", "system": "s",
                                        "threshold": 1},
            "test_cases": [case]}
    rng = random.Random(11)
    candidates = [{k: v for k, v in base.items() if k != "name"}]
    for key in [*base, "other"]:
        if key == "test_cases":
            continue
        for value in odd_values:
            candidates.append({**base, key: value})
    candidates += _random_mutants(base, [k for k in base if k != "test_cases"], odd_values, rng, count=1500,
                                  changes=2)
    vouched = 0
    for document in candidates:
        if checks._plain_top(document):
            vouched += 1
            assert validate("dataset", document) == [], document
        assert checks._schema_issues(document) == validate("dataset", document), document
    assert vouched > 50 and checks._plain_top(base)
    schema = load_schema("dataset")
    assert set(checks._TOP_RULES) | {"test_cases"} == set(schema["properties"])
    assert set(checks._DEFAULTS_RULES) == set(schema["$defs"]["defaults"]["properties"])

def test_ten_thousand_cases_load(tmp_path):
    cases = [{"id": f"case-{i}-{{{{lang}}}}", "category": "bulk", "prompt": "Write {{ lang }} code number " + str(i),
              "variables": {"lang": "Python"}, "expected": "def", "references": ["def", "return"],
              "assert": [{"type": "regex", "value": r"def \w+"}, {"type": "max-words", "value": 200}]}
             for i in range(10_000)]
    path = write(tmp_path / "big.json", json.dumps({"name": "big", "test_cases": cases}))
    ds = load_dataset(path)  # its speed is measured by benchmarks/dataset_throughput.py, not asserted
    assert len(ds.cases) == 10_000 and ds.cases[-1].id == "case-9999-Python"


def test_a_problem_in_a_large_dataset_is_still_found_and_placed(tmp_path):
    cases = [{"id": f"c{i}", "prompt": "p"} for i in range(5000)]
    cases[4321]["prompt"] = 5
    assert problems_of(dataset(*cases)) == ["test_cases[4321].prompt: 5 is not of type 'string'"]


def test_importing_the_package_does_not_import_grading_reports_or_runs():
    code = ("import sys, harness.datasets; "
            "print(sorted(m for m in sys.modules if m.startswith('harness.datasets.')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == ("['harness.datasets.checked_cache', 'harness.datasets.checks', 'harness.datasets.format', "
                           "'harness.datasets.model', 'harness.datasets.quick_yaml', 'harness.datasets.readers']")


def test_yaml_and_json_write_the_same_document():
    assert yaml.safe_load(ORIGINAL_YAML) == json.loads(ORIGINAL_JSON)


# --- the checked-documents cache -------------------------------------------------------------

@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))


def _cached_dataset(tmp_path, cases: int = 3) -> Path:
    path = tmp_path / "qa.yaml"
    path.write_text(yaml.safe_dump({"name": "qa", "version": "1.0", "test_cases": [
        {"id": f"c{i}", "prompt": "What is {{n}}?", "variables": {"n": i}, "expected": str(i)}
        for i in range(cases)]}))
    return path


def test_a_checked_file_is_not_parsed_or_schema_checked_again(tmp_path, monkeypatch, own_cache):
    path = _cached_dataset(tmp_path)
    first = fmt.load_file(path)
    entries = list((checked_cache.CheckedCache.default().directory).glob("*.json"))
    assert len(entries) == 1
    calls = []
    monkeypatch.setattr(readers, "_read_yaml", lambda *a: calls.append("yaml"))
    monkeypatch.setattr(checks, "_schema_issues", lambda *a: calls.append("schema") or [])
    again = fmt.load_file(path)
    assert calls == [] and again.digest == first.digest and [c.id for c in again.cases] == ["c0", "c1", "c2"]
    # The same bytes under another name are the same document.
    copy_path = tmp_path / "other" / "qa.yaml"
    copy_path.parent.mkdir()
    copy_path.write_bytes(path.read_bytes())
    assert fmt.load_file(copy_path).source == str(copy_path) and calls == []


@pytest.mark.parametrize("suffix,text", [
    (".yaml", "name: qa\ntest_cases:\n  - id: a\n    prompt: |\n      line one\n      line two\n"),
    (".csv", 'id,prompt\na,"line one\nline two"\n'),
    (".jsonl", '{"id": "a", "prompt": "line one\\nline two"}\n'),
])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_line_endings_and_a_byte_order_mark_read_the_same_cold_and_cached(tmp_path, own_cache, suffix, text,
                                                                         newline, bom):
    path = tmp_path / f"qa{suffix}"
    path.write_bytes(bom + text.replace("\n", newline).encode("utf-8"))
    cold, cached = fmt.load_file(path), fmt.load_file(path)
    assert [c.prompt for c in cold.cases] == [c.prompt for c in cached.cases] == ["line one\nline two" + (
        "\n" if suffix == ".yaml" else "")]
    assert cold.digest == cached.digest

def test_only_a_document_json_holds_exactly_is_kept(tmp_path, own_cache):
    head = "name: qa\ntest_cases:\n  - id: a\n    prompt: p\n    metadata:\n"
    files = {"plain": "      k: v\n      n: 2\n",  # read by the quick reader: kept without being read back
             "number-key": "      1: v\n",  # JSON would make the key text: not kept
             "infinity": "      x: .inf\n"}  # JSON has no infinity: not kept, whoever read it
    entries = checked_cache.CheckedCache.default().directory
    for name, metadata in files.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(head + metadata)
        before = len(list(entries.glob("*.json"))) if entries.exists() else 0
        cold, again = fmt.load_file(path), fmt.load_file(path)
        assert cold.cases[0].metadata == again.cases[0].metadata and cold.digest == again.digest
        assert len(list(entries.glob("*.json"))) - before == (name == "plain"), name
    assert fmt.load_file(tmp_path / "number-key.yaml").cases[0].metadata == {1: "v"}


def test_a_changed_file_is_read_afresh_and_its_problems_reported(tmp_path, own_cache):
    path = _cached_dataset(tmp_path)
    fmt.load_file(path)
    text = path.read_text().replace("What is {{n}}?", "What is {{m}}?", 1)
    path.write_text(text)
    with pytest.raises(DatasetError) as err:
        fmt.load_file(path)
    assert "test_cases[0].prompt" in str(err.value)
    # A file that fails is never kept: the next load reports the same problem.
    with pytest.raises(DatasetError):
        fmt.load_file(path)


def test_a_document_checked_by_other_code_is_checked_again_and_a_broken_cache_is_ignored(
        tmp_path, monkeypatch, own_cache):
    path = _cached_dataset(tmp_path)
    fmt.load_file(path)
    (entry,) = checked_cache.CheckedCache.default().directory.glob("*.json")
    # An entry says the document passed the checks of the code that kept it: the checks'
    # version is part of its name, so a new version of them means the file is checked afresh.
    doc = json.loads(entry.read_text())
    doc["document"]["test_cases"][1]["id"] = "c0"
    entry.write_text(json.dumps(doc))
    assert [c.id for c in fmt.load_file(path).cases] == ["c0", "c0", "c2"]  # this code kept it
    monkeypatch.setattr(checked_cache, "_cache_salt", lambda: "checked-by-other-code")
    assert [c.id for c in fmt.load_file(path).cases] == ["c0", "c1", "c2"]
    assert len(list(checked_cache.CheckedCache.default().directory.glob("*.json"))) == 2
    monkeypatch.undo()
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    entry.write_text("{not json")
    assert [c.id for c in fmt.load_file(path).cases] == ["c0", "c1", "c2"]


def test_an_entry_is_named_by_the_cache_version_and_one_of_another_version_is_not_read(
        tmp_path, monkeypatch, own_cache):
    # What an entry vouches for is versioned by CACHE_VERSION (bumped by hand when the readers
    # or the checks change), not by the checks' source: moving code leaves the entries valid.
    path = _cached_dataset(tmp_path)
    data = path.read_bytes()
    assert checked_cache._cache_salt().startswith(f"checked-v{checked_cache.CACHE_VERSION}:")
    key = checked_cache.CheckedCache.key_of(path, data)
    monkeypatch.setattr(checked_cache, "CACHE_VERSION", checked_cache.CACHE_VERSION + 1)
    assert checked_cache.CheckedCache.key_of(path, data) != key
    monkeypatch.undo()
    monkeypatch.setenv("ZE_BENCHMARKS_CACHE_DIR", str(tmp_path / "cache"))
    assert checked_cache.CheckedCache.key_of(path, data) == key
    fmt.load_file(path)
    (entry,) = checked_cache.CheckedCache.default().directory.glob("*.json")
    assert entry.name == f"{key}.json"
    doc = json.loads(entry.read_text())
    doc["document"]["test_cases"][1]["id"] = "c0"
    entry.write_text(json.dumps(doc))
    assert [c.id for c in fmt.load_file(path).cases] == ["c0", "c0", "c2"]  # this version kept it
    monkeypatch.setattr(checked_cache, "CACHE_VERSION", checked_cache.CACHE_VERSION + 1)
    assert [c.id for c in fmt.load_file(path).cases] == ["c0", "c1", "c2"]  # another version: checked afresh
    assert len(list(entry.parent.glob("*.json"))) == 2


def test_the_cache_can_be_turned_off(tmp_path, monkeypatch, own_cache):
    monkeypatch.setenv("ZE_BENCHMARKS_DATASET_CACHE", "0")
    path = _cached_dataset(tmp_path)
    fmt.load_file(path)
    assert checked_cache.CheckedCache.default() is None
    monkeypatch.delenv("ZE_BENCHMARKS_DATASET_CACHE")
    assert not list(checked_cache.CheckedCache.default().directory.glob("*.json"))


# --- the plain YAML construction ------------------------------------------------------------------

_YAML_SNIPPETS = [
    "a: 1\nb: -2\nc: 0x1F\nd: 0o17\ne: 017\nf: 1_000\ng: 1:30\nh: +5\n",
    "a: 1.5\nb: .inf\nc: -.Inf\nd: .NaN\ne: 1e3\nf: 6.8523015e+5\ng: 190:20:30.15\nh: 1_000.5\n",
    "a: yes\nb: No\nc: on\nd: OFF\ne: true\nf: False\ng: y\nh: n\n",
    "a: ~\nb: null\nc: Null\nd:\ne: ''\nf: \"\"\n",
    "a: 2024-05-01\nb: 2001-12-14t21:59:43.10-05:00\nc: '2024-05-01'\n",
    "a: \"quoted \\u00e9 \\n\"\nb: 'single ''q'''\nc: |\n  literal\n  block\nd: >\n  folded\n  text\n",
    "list:\n  - 1\n  - two\n  - [3, four, {five: 5}]\n  - {six: [6]}\nempty_list: []\nempty_map: {}\n",
    "base: &b {x: 1, y: 2}\nother: *b\n",
    "base: &b {x: 1, y: 2}\nmerged:\n  <<: *b\n  z: 3\n",
    "a: !!str 123\nb: !!int \"5\"\nc: !!float 1\nd: !!bool yes\n",
    "a: !!binary aGVsbG8=\n",
    "a: !!set {x, y}\n",
    "a: 1\na: 2\n",
    "? [1, 2]\n: unhashable key\n",
    "1: int key\n2.5: float key\ntrue: bool key\n~: null key\n",
    "a: =\n",
    "- top\n- level\n- list\n",
    "just a scalar\n",
    "name: d\nversion: 1.10\ntest_cases:\n  - id: a\n    prompt: 'p {{v}}'\n    variables: {v: 3}\n",
    "a: &x hello\nb: *x\n",
    "a: !custom value\n",
    "a: 'x'\nb: !!null ''\nc: !!map {k: v}\nd: !!seq [1]\ne: !!str\n",
]


def _same(a, b) -> bool:
    """Equal, with the same types throughout (True is not 1) and NaN equal to NaN."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


def _yaml_corpus() -> list[tuple[str, str]]:
    files = [p for p in ROOT.rglob("*.y*ml") if ".venv" not in p.parts and ".git" not in p.parts
             and p.suffix in (".yaml", ".yml")]
    return [(str(p.relative_to(ROOT)), p.read_text("utf-8")) for p in sorted(files)] + [
        (f"snippet {i}", text) for i, text in enumerate(_YAML_SNIPPETS)]


def test_the_plain_yaml_construction_builds_what_the_loader_builds():
    """Every YAML file of the repository and a set of tricky snippets (YAML 1.1 booleans and
    numbers, anchors, merge keys, explicit tags, unhashable keys): the plain construction either
    builds exactly what the loader builds or leaves the document to it."""
    plain = unusual = 0
    for name, text in _yaml_corpus():
        loader = readers._YamlLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                continue
            try:
                built = readers._construct_plain(loader, node)
            except readers._Unusual:
                unusual += 1
                continue
            expected = readers._YamlLoader(text).get_single_data()
        finally:
            loader.dispose()
        assert _same(built, expected), name
        plain += 1
    assert plain > 20 and unusual >= 8  # both ways are taken
    # an unusual document still reads as the loader reads it (or fails as it does)
    assert readers._read_yaml(Path("x.yaml"), "base: &b {x: 1}\nmerged:\n  <<: *b\n  z: 3\n") == {
        "base": {"x": 1}, "merged": {"x": 1, "z": 3}}
    assert readers._read_yaml(Path("x.yaml"), "a: !!set {x, y}\n") == {"a": {"x", "y"}}
    with pytest.raises(DatasetError, match="x.yaml"):
        readers._read_yaml(Path("x.yaml"), "? [1, 2]\n: v\n")


def test_the_remembered_tags_are_the_resolvers_tags():
    """The loader's ``resolve`` remembers the tag of short plain scalars: the same answer as the
    resolvers' own, for every kind of node, the first time and the next."""
    values = ["", " ", "~", "null", "Null", "NULL", "yes", "No", "on", "OFF", "y", "true", "False", "0", "-1",
              "+5", "0x1F", "0o17", "017", "1_000", "1:30", "1.5", ".inf", "-.Inf", ".NaN", "1e3", "6.8e+5",
              "2024-05-01", "2001-12-14t21:59:43.10-05:00", "=", "<<", "text", "-", "a" * 100, "é", "1.10"]
    loader = readers._YamlLoader("a: 1")
    try:
        for _ in range(2):
            for value in values:
                for kind in (yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode):
                    for implicit in ((True, False), (False, True), (False, False), (True, True)):
                        assert loader.resolve(kind, value, implicit) == yaml.resolver.BaseResolver.resolve(
                            loader, kind, value, implicit), (kind, value, implicit)
    finally:
        loader.dispose()
    assert readers._YamlLoader.resolve is not yaml.resolver.BaseResolver.resolve

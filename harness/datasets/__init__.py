"""Prompt datasets for ``bench dataset``: test cases sent to models and graded by assertions.

The file format and the built-in datasets are in :mod:`harness.datasets.format`, the records
and templating in :mod:`harness.datasets.model`, the checks in :mod:`harness.datasets.checks`;
this package presents their public names. Grading an answer is
:mod:`harness.datasets.assertions`; running a dataset against models is
:mod:`harness.datasets.run`, its figures and files are :mod:`harness.datasets.summary` and
:mod:`harness.datasets.exports`, imported only by what needs them.
"""

from harness.datasets.checks import parse_dataset
from harness.datasets.format import builtin_datasets, builtin_dir, load_dataset, load_file
from harness.datasets.model import (
    Assertion,
    BuiltinInfo,
    Dataset,
    DatasetError,
    MissingVariablesError,
    TestCase,
    placeholders,
    render,
)

__all__ = [
    "Assertion",
    "BuiltinInfo",
    "Dataset",
    "DatasetError",
    "MissingVariablesError",
    "TestCase",
    "builtin_datasets",
    "builtin_dir",
    "load_dataset",
    "load_file",
    "parse_dataset",
    "placeholders",
    "render",
]

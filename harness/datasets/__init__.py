"""Prompt datasets for ``bench dataset``: test cases sent to models and graded by assertions.

The file format, its checks and the built-in datasets are in :mod:`harness.datasets.format`
(re-exported here). Grading an answer is :mod:`harness.datasets.assertions`; running a
dataset against models is :mod:`harness.datasets.run`, its figures and files are
:mod:`harness.datasets.summary` and :mod:`harness.datasets.exports`, imported only by what
needs them.
"""

from harness.datasets.format import (
    Assertion,
    BuiltinInfo,
    Dataset,
    DatasetError,
    MissingVariablesError,
    TestCase,
    builtin_datasets,
    builtin_dir,
    load_dataset,
    load_file,
    parse_dataset,
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

"""The small semver range matcher used by the dependency_targets evaluator."""

import pytest

from harness._util.semver import RangeError, min_version, parse_version, satisfies


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("1.2.3", "^1.2.0", True),
        ("2.0.0", "^1.2.0", False),
        ("2.0.0-beta.1", "^1.2.0", False),
        ("0.2.5", "^0.2.3", True),
        ("0.3.0", "^0.2.3", False),
        ("0.0.4", "^0.0.3", False),
        ("1.2.9", "~1.2.3", True),
        ("1.3.0", "~1.2.3", False),
        ("1.9.0", "~1", True),
        ("20.0.7", "~20.0", True),
        ("20.1.0", "~20.0", False),
        ("5.6.2", ">=5.5 <6", True),
        ("6.0.0", ">=5.5 <6", False),
        ("5.4.9", ">=5.5 <6", False),
        ("9.1.0", "^9", True),
        ("1.5.0", "1.x", True),
        ("2.0.0", "1.x", False),
        ("1.2.7", "1.2.*", True),
        ("3.0.0", "*", True),
        ("1.2.0", "1.2", True),
        ("1.3.0", "1.2", False),
        ("2.31.0", ">=2.31,<3", True),
        ("3.0.0", ">=2.31,<3", False),
        ("2.2.9", "~=2.2", True),
        ("3.0.0", "~=2.2", False),
        ("1.4.9", "~=1.4.5", True),
        ("1.5.0", "~=1.4.5", False),
        ("1.0.0", "==1.0.0", True),
        ("1.0.1", "!=1.0.1", False),
        ("1.5.0", "1.2.3 - 2", True),
        ("3.0.0", "1.2.3 - 2", False),
        ("3.1.0", "^1.0.0 || ^3.0.0", True),
        ("2.0.0", "^1.0.0 || ^3.0.0", False),
        ("1.2.4", "> 1.2.3", True),
        ("1.2.3", "> 1.2.3", False),
        ("2.0.0", "<=1.2", False),
        ("1.2.9", "<=1.2", True),
        ("1.0.0", "workspace:^1.0.0", True),
    ],
)
def test_satisfies(version, spec, expected):
    assert satisfies(version, spec) is expected


def test_prerelease_orders_before_its_release():
    assert parse_version("1.0.0-rc.1") < parse_version("1.0.0")
    assert parse_version("1.0.0-alpha") < parse_version("1.0.0-beta")
    assert parse_version("1.0.0-2") < parse_version("1.0.0-10")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("^19.1.0", "19.1.0"), ("~5.6", "5.6.0"), (">=2.31,<3", "2.31.0"), ("==2.0.1", "2.0.1"),
     ("1.2.x", "1.2.0"), ("^1 || ^2", "1.0.0"), ("> 1.2.3", "1.2.4"), ("v3.4.5", "3.4.5")],
)
def test_min_version_is_the_lowest_admitted_version(spec, expected):
    assert str(min_version(spec)) == expected


@pytest.mark.parametrize("spec", ["*", "latest", "<3", "git+https://example.invalid/x.git", "file:../pkg"])
def test_min_version_is_none_without_a_lower_bound(spec):
    assert min_version(spec) is None


def test_unparsable_range_raises():
    with pytest.raises(RangeError):
        satisfies("1.0.0", ">=banana")
    with pytest.raises(RangeError):
        satisfies("not-a-version", "^1")

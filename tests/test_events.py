"""The one event type of the engines and the one protocol of their displays (harness/events.py)."""

from __future__ import annotations

import inspect

import pytest

from harness.events import KINDS, Event


def test_an_event_of_an_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="'cell-done'"):
        Event("cell-done")
    assert [Event(kind).kind for kind in KINDS] == list(KINDS)


def test_the_one_display_follows_the_display_protocol_with_each_engine_s_view():
    from harness.cli.dataset_view import progress_view
    from harness.cli.fleet_cmd import fleet_view
    from harness.cli.live import Progress, View
    from harness.cli.plan_view import PLAN_VIEW
    from harness.cli.stress_view import stress_view

    for display in (Progress,):
        for method in ("__enter__", "__exit__", "__call__"):
            assert callable(getattr(display, method, None)), (display.__name__, method)
        assert list(inspect.signature(display.__call__).parameters) == ["self", "event"], display.__name__
    assert isinstance(PLAN_VIEW, View)
    for make in (progress_view, fleet_view, stress_view):  # a view is made from what the engine runs
        assert list(inspect.signature(make).parameters) and inspect.signature(make).return_annotation in (
            "View", View), make.__name__


@pytest.mark.parametrize("module, parameter", [
    ("harness.scenarios.runner:run_plan", "progress"),
    ("harness.datasets.run:execute", "on_event"),
    ("harness.datasets.run:send", "on_event"),
    ("harness.fleet.execute:FleetExecution", "on_event"),
    ("harness.stress.runner:prepare", "on_event"),
])
def test_every_engine_takes_one_watcher_of_events(module, parameter):
    import importlib

    name, attr = module.split(":")
    target = getattr(importlib.import_module(name), attr)
    annotation = inspect.signature(target).parameters[parameter].annotation
    assert "OnEvent" in str(annotation) or "ProgressCallback" in str(annotation), annotation

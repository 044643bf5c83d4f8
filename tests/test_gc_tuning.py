"""harness._util.gc_tuning: fewer collections within the block, everything restored after."""

from __future__ import annotations

import gc
import threading

from harness._util.gc_tuning import THRESHOLD, fewer_collections


def test_the_block_raises_the_threshold_freezes_and_restores():
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (max(THRESHOLD, before[0]), *before[1:])
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_nested_and_concurrent_uses_restore_once_the_last_leaves():
    before = gc.get_threshold()
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with fewer_collections(threshold=50_000):
            entered.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with fewer_collections():
        with fewer_collections():
            pass
        assert gc.get_threshold()[0] == max(THRESHOLD, before[0])  # the inner exit restored nothing
        thread.start()
        assert entered.wait(10)
        assert gc.get_threshold()[0] == max(THRESHOLD, before[0])  # the outermost setting holds
    assert gc.get_threshold()[0] == max(THRESHOLD, before[0])  # the thread is still inside
    leave.set()
    thread.join(10)
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_restored_after_an_exception():
    before = gc.get_threshold()
    try:
        with fewer_collections():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


def test_cycles_are_still_collected_inside():
    class Node:
        pass

    with fewer_collections():
        a, b = Node(), Node()
        a.other, b.other = b, a
        del a, b
        assert gc.collect() >= 2

"""`gc_paused`: no collection inside the block, the heap frozen after it, the collector's
state restored by the outermost block (issue 45: nine full collections, 2.3 s of CPU, in
the imports of a 200-call head-to-head run)."""

from __future__ import annotations

import gc

import pytest

from gtog._heap import gc_paused, heap_frozen, thaw_after


@pytest.fixture(autouse=True)
def _restore() -> object:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    (gc.enable if enabled else gc.disable)()


def test_the_collector_is_off_inside_and_the_heap_frozen_after() -> None:
    gc.unfreeze()
    gc.enable()
    with gc_paused():
        assert not gc.isenabled()
        built = [[i] for i in range(1000)]  # new objects, tracked by the collector
        with gc_paused():  # nested: still off after the inner block
            pass
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.isenabled()
    assert gc.get_freeze_count() >= len(built)
    collectable = {id(o) for o in gc.get_objects()}  # (the frozen ones are in none)
    assert not any(id(x) in collectable for x in built)


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_a_command_s_freezes_are_undone_when_nothing_was_frozen_before() -> None:
    gc.unfreeze()
    thaw = thaw_after()  # (as a command starts)
    with gc_paused():
        pass
    assert gc.get_freeze_count() > 0
    thaw()  # (as it ends)
    assert gc.get_freeze_count() == 0


def test_a_heap_frozen_before_the_command_stays_frozen() -> None:
    gc.freeze()
    thaw = thaw_after()
    with gc_paused():
        pass
    thaw()
    assert gc.get_freeze_count() > 0  # (not unfrozen: objects frozen and since freed aside)


def test_after_a_paused_block_the_heap_is_known_frozen_without_counting_it() -> None:
    gc.unfreeze()
    thaw = thaw_after()
    assert not heap_frozen()
    with gc_paused():
        pass
    counted: list[int] = []

    def count() -> int:
        counted.append(1)
        return 0

    real, gc.get_freeze_count = gc.get_freeze_count, count  # (the walk the check must skip)
    try:
        assert heap_frozen() and not counted
    finally:
        gc.get_freeze_count = real
    thaw()
    assert not heap_frozen() and gc.get_freeze_count() == 0

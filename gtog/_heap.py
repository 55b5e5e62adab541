"""A command's big imports and writes kept out of the garbage collector's way.

Importing LiteLLM, scipy or pandas builds hundreds of thousands of objects that live as long
as the process. While they are built, the collector's full passes run again and again over
all of them (each time the heap has grown by a quarter: 0.1-0.4 s each on 2 cores, nine of
them in a 200-call head-to-head run, 2.3 s of its CPU), and every later full pass goes over
them once more. `gc_paused()` runs a block with the collector off and then freezes the heap
(`gc.freeze`): what the block built is never traversed again, as it is never garbage.

For the process's owner, the command line: a library caller's heap is left as it is (the
eval loop freezes and restores its own, see `gtog.eval.run._loop`), and so is the heap of a
caller that runs a command in its own process (a test's CLI runner): `thaw_after` unfreezes
it when the command ends (the process's exit freezes it again, `gtog.cli.main`).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "heap_frozen", "thaw_after"]

_lock = threading.Lock()
_depth = 0
_was_enabled = True
_froze = False  # a `gc_paused` block froze the heap (until `thaw_after`'s thaw)


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection in this block; what is on the heap after it is frozen (the
    collector's state is restored when the outermost block ends)."""
    global _depth, _was_enabled, _froze
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.freeze()
                _froze = True
                if _was_enabled:
                    gc.enable()


def heap_frozen() -> bool:
    """Whether objects are frozen: known at once after a `gc_paused` block (until the
    command's thaw), else counted.

    `gc.get_freeze_count` walks every frozen object, holding Python's lock: 40-60 ms on 2
    cores once a run's imports are frozen, which stalled the start of every run.
    """
    return _froze or gc.get_freeze_count() > 0


def thaw_after() -> Callable[[], None]:
    """What to call when the command ends: unfreeze the heap if nothing is frozen now (the
    command's own freezes undone), else nothing (a caller's frozen heap stays frozen)."""
    global _froze
    if gc.get_freeze_count() > 0:
        return _nothing
    _froze = False  # (whoever unfroze the heap since a block froze it, it is not now)
    return _thaw


def _thaw() -> None:
    global _froze
    gc.unfreeze()
    _froze = False


def _nothing() -> None:
    pass

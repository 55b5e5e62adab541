"""The loop's environment during a run: a short switch interval, restored after."""

from __future__ import annotations

import asyncio
import sys

from gtog.eval.run._loop import SWITCH_INTERVAL, _run_environment


def test_a_run_hands_python_s_lock_back_to_the_loop_quickly_and_restores_the_interval() -> None:
    before = sys.getswitchinterval()
    assert before > SWITCH_INTERVAL  # Python's 5 ms

    async def inside() -> float:
        with _run_environment(asyncio.get_running_loop(), 4):
            return sys.getswitchinterval()

    assert asyncio.run(inside()) == SWITCH_INTERVAL
    assert sys.getswitchinterval() == before


def test_a_shorter_interval_set_by_the_caller_is_kept() -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(SWITCH_INTERVAL / 2)
    try:

        async def inside() -> float:
            with _run_environment(asyncio.get_running_loop(), 4):
                return sys.getswitchinterval()

        assert asyncio.run(inside()) == SWITCH_INTERVAL / 2
    finally:
        sys.setswitchinterval(before)

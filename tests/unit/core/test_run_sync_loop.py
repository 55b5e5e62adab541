"""`run_sync`'s event loop: asyncio's C tasks and futures although graphrag_llm's
nest_asyncio2 made `asyncio.Task` the pure-Python kind, leftover tasks cancelled (their
clean-up run) before it returns, and LiteLLM's logging worker stopped on the loop it runs on,
also when an earlier `asyncio.run` left it there."""

from __future__ import annotations

import _asyncio
import asyncio

import graphrag_llm  # noqa: F401  (patches asyncio the way a real run has it)
import nest_asyncio2
import pytest
from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

from gtog.llm._models import run_sync


def test_graphrag_llm_makes_asyncio_tasks_pure_python_and_run_sync_does_not() -> None:
    async def kinds() -> set[type]:
        loop = asyncio.get_running_loop()
        child = asyncio.create_task(asyncio.sleep(0))
        await child
        return {type(asyncio.current_task()), type(child), type(loop.create_future())}

    assert asyncio.Task is not _asyncio.Task  # (what nest_asyncio2 did, Python < 3.14)
    assert run_sync(kinds()) == {_asyncio.Task, _asyncio.Future}


def test_nest_asyncio2_applied_mid_run_leaves_its_loop_alone() -> None:
    """graphrag_llm is first imported during a CLI run: its `nest_asyncio2.apply()` patches
    the running loop's class with its own scheduler, unless the loop says it is patched."""

    async def apply_then_nest() -> tuple[bool, str]:
        nest_asyncio2.apply()
        loop = asyncio.get_running_loop()
        own = type(loop).run_until_complete is asyncio.BaseEventLoop.run_until_complete
        if not own:
            return own, "patched (re-entering a C task would hang)"
        inner = asyncio.sleep(0)
        try:
            loop.run_until_complete(inner)
        except RuntimeError as error:
            return own, str(error)
        finally:
            inner.close()
        return own, "re-entered"

    assert run_sync(apply_then_nest()) == (True, "This event loop is already running")


def test_inside_a_caller_s_loop_it_runs_there_and_inside_its_own_it_says_await() -> None:
    async def outer() -> int:
        return run_sync(asyncio.sleep(0, result=7))

    assert asyncio.run(outer()) == 7  # (a notebook's loop: nest_asyncio2 re-enters it)
    with pytest.raises(RuntimeError, match="await the coroutine instead"):
        run_sync(outer())  # (C tasks cannot be re-entered: it would hang)


def test_leftover_tasks_are_cancelled_and_cleaned_up_before_it_returns() -> None:
    cleaned: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            cleaned.append("forever")

    async def work() -> str:
        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)
        return "done"

    assert run_sync(work()) == "done"
    assert cleaned == ["forever"]


def test_litellm_s_worker_is_stopped_here_and_where_an_earlier_asyncio_run_left_it() -> None:
    async def log_something() -> asyncio.Task[None] | None:
        GLOBAL_LOGGING_WORKER.start()  # (what LiteLLM does on a call's first log)
        return GLOBAL_LOGGING_WORKER._worker_task

    left = asyncio.run(log_something())  # graphrag_llm's asyncio.run: the loop stays open
    assert left is not None and not left.done()
    ours = run_sync(log_something())
    assert left.done()  # stopped on its own loop, before run_sync's loop started
    assert ours is not None and ours.done()

"""Ctrl-C during `run_sync`: the work's clean-up runs inside the loop, then KeyboardInterrupt.

graphrag_llm applies nest_asyncio2 on import, whose `asyncio.run` installs no SIGINT handler:
without ours, the interrupt lands in whatever frame runs (often the selector), and the
coroutines' `finally` blocks are skipped.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from tests.support.projects import subprocess_env

SCRIPT = r"""
import asyncio, sys, threading
import graphrag_llm  # noqa: F401  (patches asyncio the way a real run has it)
from gtog.llm._models import run_sync

done = []

async def child(i):
    try:
        while True:  # busy Python frames, where a raw KeyboardInterrupt would land
            sum(range(20000))
            await asyncio.sleep(0)
    finally:
        done.append(i)

async def work():
    try:
        async with asyncio.TaskGroup() as group:
            for i in range(3):
                group.create_task(child(i))
            print("ready", flush=True)
    finally:
        await asyncio.sleep(0)  # the clean-up may still await
        print("cleaned", sorted(done), flush=True)

try:
    run_sync(work())
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def _default_signals() -> None:
    """Ctrl-C and SIGTERM at their defaults in the child, whatever this process was started
    with (a shell starts a background job with SIGINT ignored, which its children inherit,
    and `run_sync` leaves an ignored signal ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_and_signal(signum: int) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT],
        env=subprocess_env(),
        preexec_fn=_default_signals,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready", proc.communicate()
    time.sleep(0.2)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_ctrl_c_runs_the_clean_up_then_raises_keyboard_interrupt() -> None:
    result = _run_and_signal(signal.SIGINT)
    assert result.returncode == 130, result.stderr
    assert result.stdout.splitlines() == ["cleaned [0, 1, 2]", "interrupted"], result.stderr
    assert "Traceback" not in result.stderr  # no "exception never retrieved" on the way out


def test_sigterm_is_an_interrupt_too() -> None:
    result = _run_and_signal(signal.SIGTERM)
    assert result.returncode == 130, result.stderr
    assert "cleaned [0, 1, 2]" in result.stdout

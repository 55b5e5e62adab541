"""Build the planned keys with `concurrency` worker processes, each building key after key.

A worker (`python -m gtog.eval.build._worker`) is started on first use and kept for the next
key (graphrag and LiteLLM are imported once per worker); it reads jobs on its stdin and
writes progress events on its stdout. (Forking workers from this process instead hangs the
pipeline: graphrag_llm's nest_asyncio patches and LiteLLM's state do not survive a fork.)
The event loop only waits on the workers' pipes; a project is made in a worker thread. A key
that fails (its pipeline, its worker, or making its project) is a `BuildResult` with the
error and the log to read; the other keys go on (a worker that died is started again). An
interrupted build stops its workers.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog._errors import describe_exception
from gtog.eval.build._plan import KeyPlan
from gtog.eval.build._projects import make_project
from gtog.eval.build._worker import EVENT

__all__ = ["WORKER_LOG", "BuildResult", "EventHook", "Overrides", "build_keys"]

WORKER_LOG = "logs/gtog-index.log"
"""Where a worker's own output goes while it builds a key, under the key's project."""

EventHook = Callable[[str, dict[str, Any]], None]
Overrides = Callable[[KeyPlan], dict[str, Any] | None]


@dataclass(frozen=True)
class BuildResult:
    """How one key's build ended."""

    key: str
    ok: bool
    seconds: float = 0.0
    error: str | None = None
    workflow: str | None = None
    """The step that failed (a graphrag workflow, `<config>`, `<worker>`, `<project>`)."""
    log: str | None = None


async def _started(log: Path) -> asyncio.subprocess.Process:
    """A worker: a new Python process, its output (until its first job says where) in `log`."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "gtog.eval.build._worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=sink,
            env=dict(os.environ),
            limit=1 << 24,
        )
    return proc


class _Worker:
    """One worker process, started on first use (and again if it died)."""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None

    async def _job(
        self, plan: KeyPlan, changes: dict[str, Any] | None, hook: EventHook
    ) -> dict[str, Any] | None:
        """Send one job and pass on its events; its `end` event (None: the worker died)."""
        log = plan.project / WORKER_LOG
        if self.proc is None or self.proc.returncode is not None:
            self.proc = await _started(log)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"root": str(plan.project), "overrides": changes, "log": str(log)}
        self.proc.stdin.write(json.dumps(job).encode() + b"\n")
        await self.proc.stdin.drain()
        while raw := await self.proc.stdout.readline():
            line = raw.decode("utf-8", "replace")
            if not line.startswith(EVENT):
                continue
            event = json.loads(line[len(EVENT) :])
            hook(plan.key, event)
            if event.get("event") == "end":
                return event
        await self.proc.wait()
        return None

    async def build(self, plan: KeyPlan, overrides: Overrides, hook: EventHook) -> BuildResult:
        """Make the key's project, then build it in this worker."""
        try:
            await asyncio.to_thread(make_project, plan)
            changes = overrides(plan)  # (after the project has its settings: model ids)
        except Exception as exc:
            return BuildResult(plan.key, False, error=describe_exception(exc), workflow="<project>")
        end = await self._job(plan, changes, hook)
        log = str(plan.project / WORKER_LOG)
        if end is None:
            code = self.proc.returncode if self.proc is not None else None
            error = f"the indexing process ended (exit code {code}) before the build did"
            return BuildResult(plan.key, False, error=error, workflow="<worker>", log=log)
        return BuildResult(
            plan.key,
            bool(end.get("ok")),
            float(end.get("seconds") or 0.0),
            end.get("error"),
            end.get("failed"),
            end.get("log") or log,
        )

    async def close(self) -> None:
        """End the worker: the end of its jobs, then a wait (a signal if it does not exit)."""
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            await proc.wait()


async def build_keys(
    plans: list[KeyPlan],
    overrides: Overrides,
    concurrency: int,
    on_event: EventHook | None = None,
) -> list[BuildResult]:
    """Build every plan's index with `concurrency` workers; one result per plan, in order
    (a key not reached, when interrupted, has none)."""
    hook = on_event or (lambda key, event: None)
    queue: asyncio.Queue[KeyPlan] = asyncio.Queue()
    for plan in plans:
        queue.put_nowait(plan)
    results: dict[str, BuildResult] = {}
    workers = [_Worker() for _ in range(max(1, min(concurrency, len(plans))))]

    async def serve(worker: _Worker) -> None:
        while not queue.empty():
            plan = queue.get_nowait()
            hook(plan.key, {"event": "begin"})
            results[plan.key] = result = await worker.build(plan, overrides, hook)
            hook(plan.key, {"event": "done", "ok": result.ok})

    try:
        await asyncio.gather(*(serve(w) for w in workers))
    finally:
        await asyncio.gather(*(w.close() for w in workers))
    return [results[p.key] for p in plans if p.key in results]

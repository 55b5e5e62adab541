"""Indexing in a process of its own: `python -m gtog.eval.build._worker`.

graphrag's indexing changes the working directory and replaces the `graphrag` logger's
handlers, so keys built side by side each need a process; a worker builds one key after
another (graphrag and LiteLLM are imported once per worker, not once per key). Jobs come
on stdin, one JSON line each (`{"root": ..., "overrides": {...}, "log": ...}`; the
worker's own output goes to `log` while it builds that key); progress goes to stdout as
lines starting with `EVENT` (anything else a library prints there is ignored), a job ending
with an `end` event. The worker exits at the end of stdin.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["EVENT", "main"]

EVENT = "@gtog-build "


def emit(event: dict[str, Any]) -> None:
    """One progress event on stdout."""
    sys.stdout.write(EVENT + json.dumps(event, default=str) + "\n")
    sys.stdout.flush()


def _callbacks() -> Any:
    from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks

    class Events(NoopWorkflowCallbacks):
        """graphrag's workflow callbacks, as events for the parent's progress bars."""

        def pipeline_start(self, names: list[str]) -> None:
            emit({"event": "start", "workflows": list(names)})

        def workflow_start(self, name: str, instance: object) -> None:
            emit({"event": "workflow", "name": name})

        def workflow_end(self, name: str, instance: object) -> None:
            emit({"event": "workflow_end", "name": name})

    return Events()


def _log_to(path: str | None) -> None:
    """Send this process's stderr (fd 2: Python's and native libraries') to `path`."""
    if not path:
        return
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


async def _serve() -> None:
    """Build each job read from stdin, in turn, in this one event loop."""
    from gtog.eval.build._indexing import index_project

    while line := await asyncio.to_thread(sys.stdin.readline):
        if not line.strip():
            continue
        job = json.loads(line)
        _log_to(job.get("log"))
        outcome = await index_project(Path(job["root"]), job.get("overrides"), [_callbacks()])
        emit({"event": "end", **asdict(outcome)})


def main() -> int:
    """Run the jobs on stdin; 0 at the end of stdin."""
    import gtog  # noqa: F401  (offline defaults before graphrag imports LiteLLM)
    from gtog._logs import quiet_litellm
    from gtog.llm._models import run_sync

    quiet_litellm()
    run_sync(_serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""One output folder, one run: an exclusive lock held for the run's lifetime.

The lock is an OS file lock (`flock`) on `OUTPUT/.gtog-eval.lock`: the kernel releases it
when the holding process ends in any way (even `kill -9`), so a lock left behind by a
killed run is simply taken over, while a live run's lock refuses a second one at once.
"""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path
from typing import IO

from gtog.errors import InputError

__all__ = ["LOCK_NAME", "OutputLock"]

LOCK_NAME = ".gtog-eval.lock"


class OutputLock:
    """Exclusive lock on an output folder (`with OutputLock(dir): ...`)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._handle: IO[str] | None = None

    def acquire(self) -> OutputLock:
        """Take the lock or raise InputError naming the process that holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            handle.close()
            raise InputError(
                f"{self.path.parent}: another gtog eval is running on this output folder "
                f"({holder}); wait for it, or use another --output"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        """Release the lock (the file stays; it is harmless)."""
        if self._handle is not None:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
            self._handle.close()
            self._handle = None

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

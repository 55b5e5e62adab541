"""One output folder, one run: an exclusive lock held for the run's lifetime.

The lock is an OS file lock (`flock`) on `OUTPUT/.gtog-eval.lock`: the kernel releases it
when the holding process ends in any way (even `kill -9`), so a lock left behind by a
killed run is simply taken over, while a live run's lock refuses a second one at once.
A run that ends removes the file (and the output folder, if it made it and wrote nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from pathlib import Path
from typing import IO

from gtog._errors import InputError

__all__ = ["LOCK_NAME", "OutputLock"]

LOCK_NAME = ".gtog-eval.lock"


class OutputLock:
    """Exclusive lock on an output folder (`with OutputLock(dir): ...`)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        self._handle: IO[str] | None = None
        self._made: list[Path] = []
        """Folders this lock created (removed again on release if nothing else is in them)."""

    def acquire(self) -> OutputLock:
        """Take the lock or raise InputError naming the process that holds it."""
        folder = self.path.parent
        self._made = [d for d in (folder, *folder.parents) if not d.exists()]
        folder.mkdir(parents=True, exist_ok=True)
        while True:
            handle = self.path.open("a+", encoding="utf-8")
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                handle.close()
                raise InputError(
                    f"{folder}: another gtog eval is running on this output folder "
                    f"({holder}); wait for it, or use another --output"
                ) from None
            # the previous holder removes the file on release: a lock on a file that is no
            # longer the one at the path locks nothing; open the current one again
            try:
                same = os.stat(self.path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            handle.close()
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
        handle.flush()
        self._handle = handle
        return self

    def release(self) -> None:
        """Release the lock and remove its file; a folder the lock created for a run that
        wrote nothing in it is removed too (a run refused before any work leaves nothing)."""
        if self._handle is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # while still holding it: see acquire()
        fcntl.flock(self._handle.fileno(), fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None
        for folder in self._made:  # innermost first; stops at the first that is not empty
            try:
                folder.rmdir()
            except OSError:
                break
        self._made = []

    def __enter__(self) -> OutputLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

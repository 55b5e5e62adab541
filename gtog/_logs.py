"""Where log output goes during a gtog command: a file with secrets masked, not the terminal.

LiteLLM and graphrag log every retry and failure with tracebacks; during `gtog eval` that
is thousands of lines on the terminal and, when a provider echoes the key, the key.
`capture_logs` sends every record of every logger to one file through a
`RedactingFilter` (written by a thread of its own, off the event loop), silences the
libraries' own terminal handlers and LiteLLM's "Give Feedback" prints, and restores
everything afterwards.
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterator
from contextlib import contextmanager
from logging.handlers import QueueHandler, QueueListener
from pathlib import Path

from gtog._redact import RedactingFilter, Redactor

__all__ = ["capture_logs", "quiet_litellm", "warnings_to_stderr"]

_NOISY = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "graphrag", "graphrag_llm")
_PER_CALL = ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm")


def quiet_litellm() -> None:
    """Stop LiteLLM's own prints (feedback banners, debug info)."""
    try:
        import litellm

        litellm.suppress_debug_info = True
        litellm.set_verbose = False
    except ImportError:  # pragma: no cover - litellm is a graphrag dependency
        pass


@contextmanager
def capture_logs(
    path: Path | None, redactor: Redactor, level: int = logging.INFO
) -> Iterator[None]:
    """Route all logging to `path` (None: nowhere) with secrets masked, for this block."""
    quiet_litellm()
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    saved: dict[str, tuple[list[logging.Handler], bool, int]] = {}
    for name in _NOISY:
        logger = logging.getLogger(name)
        saved[name] = (list(logger.handlers), logger.propagate, logger.level)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
        logger.propagate = True
        # LiteLLM's info is a line per chat call ("completion() model=..."), made on the
        # event loop: its warnings and errors are kept
        logger.setLevel(logging.WARNING if name in _PER_CALL else logging.NOTSET)
    handler: logging.Handler
    listener: QueueListener | None = None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(path, encoding="utf-8")
        to_file.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        # records are masked where they are logged and written by a thread of their own:
        # a model call's log line on the event loop never waits for the disk
        lines: queue.SimpleQueue[logging.LogRecord] = queue.SimpleQueue()
        handler = QueueHandler(lines)
        listener = QueueListener(lines, to_file)
        listener.start()
    else:
        handler = logging.NullHandler()
    handler.addFilter(RedactingFilter(redactor))
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    try:
        yield
    finally:
        root.removeHandler(handler)
        if listener is not None:
            listener.stop()  # (the lines still queued are written first)
            for written in listener.handlers:
                written.close()
        handler.close()
        for old in saved_root[0]:
            root.addHandler(old)
        root.setLevel(saved_root[1])
        for name, (handlers, propagate, lvl) in saved.items():
            logger = logging.getLogger(name)
            for h in handlers:
                logger.addHandler(h)
            logger.propagate = propagate
            logger.setLevel(lvl)


@contextmanager
def warnings_to_stderr(redactor: Redactor) -> Iterator[None]:
    """For a short command: warnings and errors (an HTTP method's retries) as one line each
    on stderr, secrets masked, instead of Python's unfiltered last-resort output."""
    import sys

    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root.addHandler(handler)
    try:
        yield
    finally:
        root.removeHandler(handler)
        handler.close()

"""The runs under the viewer's folders: where they are, what they are called, their state.

A run is a folder holding a checkpoint (`eval_checkpoint.jsonl`) or the detailed and summary
results. Folders are walked without following symbolic links, and a run folder that
resolves outside the folder it was found under is left out: the viewer serves nothing
outside the folders it was given. A run's name (its URL) is its path relative to that
folder; the name is only ever looked up here, never joined to a path.

A run is `running` while its output lock names a live process on this host (the lock file
is read, never locked: the viewer must not stand in a starting run's way), `complete` when
its summary says so, `stopped` otherwise (interrupted, or stopped by a limit).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gtog.eval.results._labels import LABELS_NAME
from gtog.eval.results._spec import CHECKPOINT_NAME, DETAILED_NAME, SUMMARY_NAME
from gtog.eval.run._lock import LOCK_NAME

__all__ = ["RunRef", "find_runs", "run_state", "signature"]

_SKIP = frozenset({"cache", "lancedb", "logs", "input", "node_modules", "__pycache__"})
"""Folders never walked into: a project's cache, vector store, logs and documents."""


@dataclass(frozen=True)
class RunRef:
    """One run folder: its name (URL path) and where it is."""

    name: str
    path: Path


def _is_run(names: set[str]) -> bool:
    return CHECKPOINT_NAME in names or (DETAILED_NAME in names and SUMMARY_NAME in names)


def find_runs(roots: Iterable[Path]) -> dict[str, RunRef]:
    """name -> run, for every run folder under `roots` (in a stable order)."""
    roots = [Path(r).resolve() for r in roots]
    labels = _labels(roots)
    out: dict[str, RunRef] = {}
    for root, label in zip(roots, labels, strict=True):
        for folder, dirs, files in os.walk(root, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP)
            if not _is_run(set(files)):
                continue
            path = Path(folder)
            if not path.resolve().is_relative_to(root):
                continue
            rel = path.relative_to(root).as_posix()
            name = label if rel == "." else (f"{label}/{rel}" if label else rel)
            out[name or path.name] = RunRef(name or path.name, path)
    return out


def _labels(roots: list[Path]) -> list[str]:
    """How each root shows in run names: nothing for one folder, its name for several."""
    if len(roots) == 1:
        return [""]
    names = [r.name or "root" for r in roots]
    return [n if names.count(n) == 1 else f"{n}-{i + 1}" for i, n in enumerate(names)]


def signature(path: Path) -> tuple[tuple[str, int, int], ...]:
    """What changes when a run's files change: (name, size, mtime) of each result file."""
    out = []
    for name in (CHECKPOINT_NAME, DETAILED_NAME, SUMMARY_NAME, "spend.json", LABELS_NAME):
        try:
            st = (path / name).stat()
        except OSError:
            continue
        out.append((name, st.st_size, st.st_mtime_ns))
    return tuple(out)


def _running(path: Path) -> bool:
    try:
        holder = (path / LOCK_NAME).read_text(encoding="utf-8").split()
    except OSError:
        return False
    # "pid N on HOST": a live process of this host holds it (a killed run leaves the file)
    if len(holder) != 4 or holder[0] != "pid" or holder[2] != "on":
        return False
    if holder[3] != socket.gethostname():
        return True  # another host's run: cannot be checked, taken as running
    try:
        os.kill(int(holder[1]), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _summary_meta(path: Path) -> dict[str, Any]:
    try:
        data = json.loads((path / SUMMARY_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    meta = data.get("metadata") if isinstance(data, dict) else None
    return meta if isinstance(meta, dict) else {}


def run_state(path: Path, summary_meta: dict[str, Any] | None = None) -> tuple[str, str | None]:
    """(`running` | `complete` | `stopped`, why it stopped or None)."""
    if _running(path):
        return "running", None
    meta = _summary_meta(path) if summary_meta is None else summary_meta
    if meta.get("status") == "complete":
        return "complete", None
    reason = meta.get("stop_reason")
    return "stopped", str(reason) if reason else None

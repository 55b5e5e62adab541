"""gtog's file helpers: the one atomic writer (temp file beside the target, fsync, rename),
backups, and the folder of the user's caches."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["backup", "user_cache_dir", "write_atomic", "write_json_atomic"]


def user_cache_dir() -> Path:
    """gtog's folder of this user's caches (assembled model weights, compiled templates):
    $GTOG_CACHE_DIR, else $XDG_CACHE_HOME/gtog, else ~/.cache/gtog. Not made here."""
    base = os.environ.get("GTOG_CACHE_DIR")
    if base:
        return Path(base)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gtog"


def write_atomic(path: Path, data: str | bytes) -> None:
    """Write `data` to `path` so that readers see the old file or the whole new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as indented UTF-8 JSON, atomically."""
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def backup(path: Path, *, copy: bool = False) -> Path:
    """Keep `path` as `<name>.<time>.bak` (`-2`, `-3`, ... when that name is taken): moved
    there, or copied with `copy` (the file stays until it is replaced). The backup's path."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{stamp}.bak")
    n = 1
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}.{stamp}-{n}.bak")
    if copy:
        shutil.copy2(path, target)
    else:
        path.rename(target)
    return target

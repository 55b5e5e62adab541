"""Paths in a graphrag settings file written on Windows (`output\\lancedb`), read on any OS.

Any graphrag version's file: a relative path with backslashes is read with slashes; an
absolute Windows path stays as written.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["portable_path", "portable_paths"]

_PATH_KEYS = (
    ("vector_store", "db_uri"),
    ("output_storage", "base_dir"),
    ("input_storage", "base_dir"),
    ("update_output_storage", "base_dir"),
    ("reporting", "base_dir"),
    ("cache", "storage", "base_dir"),
    *((block, "prompt") for block in ("local_search", "basic_search", "drift_search")),
    ("drift_search", "reduce_prompt"),
    *(("global_search", key) for key in ("map_prompt", "reduce_prompt", "knowledge_prompt")),
)
"""Paths of a graphrag 3.x settings file that a Windows user writes with backslashes."""


def portable_paths(data: dict[str, Any]) -> dict[str, Any]:
    r"""`data` with the relative paths of `_PATH_KEYS` written on Windows (`output\lancedb`)
    read on any OS (a changed copy; `data` itself is not changed)."""
    import copy

    out = data
    for keys in _PATH_KEYS:
        node: Any = data
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        value = node.get(keys[-1]) if isinstance(node, dict) else None
        if isinstance(value, str) and "\\" in value and portable_path(value) != value:
            if out is data:
                out = copy.deepcopy(data)
            target = out
            for key in keys[:-1]:
                target = target[key]
            target[keys[-1]] = portable_path(value)
    return out


def portable_path(path: str) -> str:
    r"""A relative path as written on Windows (`output\lancedb`) read on any OS."""
    if re.match(r"^[A-Za-z]:[\\/]", path) or path.startswith("\\\\"):
        return path  # an absolute Windows path stays as the user wrote it
    return path.replace("\\", "/")

"""Reading other systems' JSON: the value at a dotted path, and a context as text.

Used by answers files (`fields: {answer: pred}`) and HTTP methods (`answer: data.text`).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MISSING", "context_text", "pick"]

MISSING: Any = object()
"""What `pick` returns for a path the data does not have (None may be a value)."""


def pick(data: Any, path: str) -> Any:
    """The value at a dotted path (`metrics.cost`, `choices.0.text`), or `MISSING`."""
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return MISSING
    return data


def context_text(value: Any) -> str | None:
    """A context as text: a string as it is; a list's or a mapping's items joined by blank
    lines (an item `{text: ...}` by its text, other values as JSON)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = list(value.values())
    elif isinstance(value, list):
        parts = value
    else:
        return json.dumps(value, ensure_ascii=False)
    texts = [p.get("text", p) if isinstance(p, dict) else p for p in parts]
    return "\n\n".join(
        t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in texts
    )

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


def _item_text(item: Any) -> Any:
    """An item's text: `{text: ...}` by its text, `{content: ...}` (LightRAG's references
    with `include_chunk_content`: a string or a list of chunks) by its content."""
    if not isinstance(item, dict):
        return item
    if "text" in item:
        return item["text"]
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(c, str) for c in content):
        return "\n\n".join(content)
    return item


def context_text(value: Any) -> str | None:
    """A context as text: a string as it is; a list's or a mapping's items joined by blank
    lines (an item `{text: ...}` by its text, `{content: ...}` by its content, other values
    as JSON)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = list(value.values())
    elif isinstance(value, list):
        parts = value
    else:
        return json.dumps(value, ensure_ascii=False)
    texts = [_item_text(p) for p in parts]
    return "\n\n".join(
        t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in texts
    )

"""Stable short hashes of JSON-able values (specs, settings, prompts)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["stable_hash"]


def stable_hash(value: Any, length: int = 16) -> str:
    """A short sha256 of a JSON-able value (key order does not matter)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:length]

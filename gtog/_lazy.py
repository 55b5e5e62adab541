"""Lazy package exports: a package lists what it offers and imports it on first use.

`gtog.eval` offers the whole harness, which imports graphrag, LiteLLM and scipy (seconds);
a command that only has to read a config and say what is wrong with it must not wait for
them. A package's `__init__` declares its exports with `lazy_exports` and gets them as
module attributes (PEP 562) the first time they are used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose name `n` is `exports[n]`'s `n`."""

    def getattr_(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def dir_() -> list[str]:
        return sorted(exports)

    return getattr_, dir_

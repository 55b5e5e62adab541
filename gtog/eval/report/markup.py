"""A tiny HTML/SVG element builder that escapes every string it is given.

Text from a dataset or a model only ever enters a page as a `str` child or attribute value,
and both are escaped here, so an answer holding `<script>` shows as text. Markup built by
`el` is a `Markup` (a `str` subclass) and is passed through unchanged.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

__all__ = ["Child", "Markup", "el", "esc", "join"]


class Markup(str):
    """A string of markup that is already safe (built by `el`/`esc`/`join`)."""

    __slots__ = ()


Child = Markup | str | int | float | None | Iterable["Child"]

_VOID = frozenset({"meta", "br", "hr", "input", "img", "link", "col"})


def esc(value: object) -> Markup:
    """`value` as escaped text (Markup passes through)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(children: Iterable[Child]) -> Markup:
    """Concatenate children, escaping text."""
    parts: list[str] = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, str | int | float):
            parts.append(esc(child))
        else:
            parts.append(join(child))
    return Markup("".join(parts))


def _attr_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def el(tag: str, attrs: Mapping[str, object] | None = None, *children: Child) -> Markup:
    """`<tag attrs>children</tag>`; attribute names come from code, values are escaped.

    An attribute whose value is None or False is left out; True gives a bare attribute.
    """
    parts = [f"<{tag}"]
    for name, value in (attrs or {}).items():
        if value is None or value is False:
            continue
        if value is True:
            parts.append(f" {name}")
        else:
            parts.append(f' {name}="{html.escape(_attr_value(value), quote=True)}"')
    parts.append(">")
    if tag in _VOID:
        return Markup("".join(parts))
    return Markup("".join(parts) + join(children) + f"</{tag}>")

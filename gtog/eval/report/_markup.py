"""A tiny SVG element builder that escapes every string it is given (for the charts).

Text from a dataset or a model only ever enters a chart as a `str` child or attribute value,
and both are escaped here with markupsafe, the escaping the page's Jinja2 templates use, so
an entity name holding `<script>` shows as text. What `el` builds is a `markupsafe.Markup`:
passed through unchanged here and by the templates' autoescaping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from markupsafe import Markup, escape

__all__ = ["Child", "Markup", "el", "join"]

Child = Markup | str | int | float | None | Iterable["Child"]


def join(children: Iterable[Child]) -> Markup:
    """Concatenate children, escaping text."""
    parts: list[str] = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, str | int | float):
            parts.append(escape(child))
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
            parts.append(f' {name}="{escape(_attr_value(value))}"')
    parts += [">", join(children), f"</{tag}>"]
    return Markup("".join(parts))

"""The one prompt renderer: named placeholders filled in a single pass.

`{{name}}`, `{name}`, `${name}` and `$name` are replaced where `name` is one of the given values;
anything else (JSON braces, unknown names) stays as written, and a substituted value is
never scanned again, so an answer that contains `{question}` cannot pull in the question.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["placeholders", "render_prompt"]

_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}|\{(\w+)\}|\$\{(\w+)\}|\$(\w+)")


def render_prompt(template: str, values: Mapping[str, object]) -> str:
    """`template` with each known placeholder replaced by `str(value)`."""

    def fill(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        return str(values[name]) if name in values else match.group(0)

    return _PLACEHOLDER.sub(fill, template)


def placeholders(template: str) -> set[str]:
    """The placeholder names a template uses (in any of the three forms)."""
    return {next(g for g in m.groups() if g) for m in _PLACEHOLDER.finditer(template)}

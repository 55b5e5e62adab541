"""`--local` for gtog commands: plan the bundled local model server, validate, then start it.

The port is chosen first so that every input can be validated against the final model
addresses before the server (8-12 s to start) is launched.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from gtog.cli._say import error

__all__ = ["LocalPlan", "plan_local_server"]


@dataclass(frozen=True)
class LocalPlan:
    """Where the local server will listen; overrides for each project point there."""

    port: int

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL the server will have."""
        return f"http://127.0.0.1:{self.port}/v1"

    def overrides(self, root: Path) -> dict[str, Any]:
        """graphrag config overrides that point the project at `root` to the server."""
        from gtog.local._overrides import local_model_overrides

        return local_model_overrides(self.base_url, root)

    @contextmanager
    def running(self, console: Console) -> Iterator[None]:
        """Start the server on the planned port for the `with` block (exit 2 if it cannot).

        The `gtog[local]` extra and its weights are checked here, after the command has
        validated its own input, so a typo is reported before anything slow happens.
        """
        from gtog.local._lifecycle import LocalServerError, running_local_server
        from gtog.local._weights import LocalExtraMissingError, WeightsError

        stack = ExitStack()
        try:
            info = stack.enter_context(running_local_server(port=self.port))
        except (LocalExtraMissingError, WeightsError, LocalServerError) as exc:
            error(console, exc)
            raise typer.Exit(2) from None
        with stack:
            console.print(f"local model server at {info.base_url}", highlight=False, markup=False)
            yield


def plan_local_server() -> LocalPlan:
    """Reserve a free port on 127.0.0.1 for the local server (started later by `running`)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return LocalPlan(port)

"""The `gtog` command: graphrag's own typer app plus gtog's commands."""

from __future__ import annotations

import gtog  # noqa: F401  (sets offline defaults before graphrag imports litellm)
from graphrag.cli.main import app

__all__ = ["app", "main"]


def main() -> None:
    """Entry point of the `gtog` console script."""
    app(prog_name="gtog")

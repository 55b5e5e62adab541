"""The `gtog` command: graphrag's own typer app plus gtog's commands."""

from __future__ import annotations

import importlib

from graphrag.cli.main import app

import gtog  # noqa: F401  (sets offline defaults before graphrag imports litellm)

__all__ = ["app", "main"]

_EXTENSIONS = (
    "gtog.cli.eval",
    "gtog.cli.query",
    "gtog.cli.init",
    "gtog.cli.qa",
    "gtog.cli.local",
    "gtog.cli.judge_check",
)


def _register_all() -> None:
    for name in _EXTENSIONS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(app)


_register_all()


def main() -> None:
    """Entry point of the `gtog` console script."""
    app(prog_name="gtog")

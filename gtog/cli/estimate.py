"""`gtog eval --estimate`: what a run will cost, before it is paid."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

if TYPE_CHECKING:
    from gtog.eval.run import EvalRun

__all__ = ["run_pilot", "show_bounds"]


def show_bounds(run: EvalRun, console: Console) -> None:
    raise NotImplementedError


def run_pilot(run: EvalRun, k: int, quiet: bool, console: Console) -> int:
    raise NotImplementedError

"""`gtog eval merge OUT DIR...`: combine the shard folders of one run into one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gtog.errors import InputError

__all__ = ["merge_command"]

err = Console(stderr=True)


def merge_command(
    out: Annotated[Path, typer.Argument(help="Folder for the merged run (must hold no results).")],
    dirs: Annotated[
        list[Path], typer.Argument(help="The shard folders (OUTPUT/shard-I-of-N), all N of them.")
    ],
    partial: Annotated[
        bool,
        typer.Option("--partial", help="Merge even if a shard has pairs still to run."),
    ] = False,
) -> None:
    """Merge `gtog eval --shard` outputs: checks they share one spec and cover every pair once."""
    from gtog.eval.merge import merge_runs
    from gtog.eval.report import print_summary
    from gtog.eval.results import SUMMARY_NAME

    try:
        result = merge_runs(out, dirs, partial=partial)
    except InputError as exc:
        err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    for label, n in result.missing.items():
        err.print(f"[yellow]warning:[/yellow] shard {label}: {n} pairs not run", highlight=False)
    summary = result.summary or result.out / SUMMARY_NAME
    print_summary(json.loads(summary.read_text()), result.spec["metrics"])
    err.print(
        f"merged {result.shards} shards, {len(result.records)} records\n"
        f"wrote {result.detailed}\nwrote {result.summary}",
        highlight=False,
    )

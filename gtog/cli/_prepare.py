"""`gtog eval prepare` (and `gtog eval --build-indexes`): build the indexes that are missing.

The terminal shows the plan with its estimate (a table, at most `SHOWN` keys and the
total), asks for a confirmation (`--yes` answers it), then a progress bar overall and one
per key being built (without a terminal, a line every 30 s: `PlainProgress`), and one line
per key that failed, naming its log. Exit codes: 0 every planned index built (or nothing to
build); 1 some failed, or the confirmation was declined; 2 bad input.
"""

from __future__ import annotations

import contextlib
import os
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from gtog.cli._say import error

if TYPE_CHECKING:
    from gtog._redact import Redactor
    from gtog.cli._local_support import LocalPlan
    from gtog.eval.build._estimate import Estimate
    from gtog.eval.build._prepare import Preparation
    from gtog.eval.build._runner import BuildResult

__all__ = ["build_missing", "prepare_command"]

err = Console(stderr=True)
SHOWN = 20
"""Keys listed in the estimate table (the total covers all)."""
LOG_NAME = "prepare.log"


def _usd(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.2f}" if value >= 0.01 else f"${value:.4f}"


def _estimate_table(prep: Preparation) -> Table:
    table = Table(
        title="indexing estimate: extraction calls exact, the rest (~) assumed",
        title_justify="left",
    )
    for column in ("index", "docs", "tokens", "chunks", "calls", "~prompt", "~output", "~USD"):
        left = column == "index"
        table.add_column(column, justify="left" if left else "right", no_wrap=left)

    def row(e: Estimate, name: str) -> None:
        calls = f"{e.extraction_calls} + ~{e.summary_calls + e.report_calls}"
        table.add_row(
            name,
            str(e.documents),
            f"{e.tokens:,}",
            str(e.chunks),
            calls,
            f"{e.prompt_tokens:,}",
            f"{e.output_tokens:,}",
            _usd(e.usd),
        )

    for e in prep.estimates[:SHOWN]:
        row(e, e.key)
    if len(prep.estimates) > SHOWN:
        table.add_row(f"... {len(prep.estimates) - SHOWN} more", *[""] * 7)
    if len(prep.estimates) > 1:
        row(prep.total, "total")
    return table


def _redactor(prep: Preparation) -> Redactor:
    """The models' keys and the environment's secrets (as every command masks them)."""
    from gtog._redact import Redactor, environment_secrets

    return Redactor([*prep.secrets, *environment_secrets(os.environ)])


def _failure(prep: Preparation, result: BuildResult) -> str:
    plan = next(p for p in prep.plans if p.key == result.key)
    where = f" {result.workflow}:" if result.workflow else ""
    log = f" (log: {result.log})" if result.log else ""
    return f"index {result.key!r} ({plan.project}):{where} {result.error}{log}"


def _confirm(prep: Preparation, yes: bool) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        error(err, "confirm the estimate with --yes (no terminal to ask on)")
        raise typer.Exit(2)
    n = len(prep.todo)
    if not typer.confirm(f"Build {n} index{'es' if n > 1 else ''}?", default=False, err=True):
        err.print("nothing built", highlight=False)
        raise typer.Exit(1)


def _build(prep: Preparation, quiet: bool) -> list[BuildResult]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskID,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from gtog._logs import capture_logs
    from gtog.cli._progress import PlainProgress
    from gtog.eval.build._prepare import run_preparation
    from gtog.llm._models import run_sync

    plain = not quiet and not err.is_terminal  # no bar to redraw: a line every 30 s
    progress = Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or plain,
    )
    lines = PlainProgress(err, len(prep.todo), label="indexing")
    tasks: dict[str, TaskID] = {}

    def on_event(key: str, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind == "begin":
            tasks[key] = progress.add_task(f"  {key}", total=None)
        elif kind == "start":
            progress.update(tasks[key], total=len(event.get("workflows") or []))
        elif kind == "workflow":
            progress.update(tasks[key], description=f"  {key}: {event.get('name')}")
            lines.last = f"{key}: {event.get('name')}"
        elif kind == "workflow_end":
            progress.update(tasks[key], advance=1)
        elif kind == "done":
            progress.remove_task(tasks.pop(key))
            progress.update(overall, advance=1)
            if plain:
                lines.advance(f"{key} {'built' if event.get('ok') else 'failed'}")

    with (
        capture_logs(prep.root / LOG_NAME, _redactor(prep)),
        progress,
        lines if plain else contextlib.nullcontext(),
    ):
        overall = progress.add_task("indexes", total=len(prep.todo))
        return run_sync(run_preparation(prep, on_event))


def build_missing(
    root: Path,
    *,
    config: Path | None = None,
    index_keys: list[str] | None = None,
    yes: bool = False,
    quiet: bool = False,
    concurrency: int | None = None,
    local: LocalPlan | None = None,
    start_server: bool = True,
) -> int:
    """Plan, estimate, confirm and build; the exit code (see the module's docstring).

    With `local`, the models point at the local server, which is started for the build
    unless `start_server` is False (the caller runs it).
    """
    from gtog._errors import InputError
    from gtog.eval.build._prepare import PrepareOptions, plan_preparation

    options = PrepareOptions(
        root=root,
        config_path=config,
        index_keys=index_keys,
        concurrency=concurrency,
        model_overrides=local.overrides if local is not None else None,
        local=local is not None,
    )
    try:
        prep = plan_preparation(options)
    except InputError as exc:
        error(err, exc)
        return 2
    built = len(prep.plans) - len(prep.todo)
    if not prep.todo:
        err.print(
            f"gtog eval prepare: nothing to build: all {built} indexes are complete",
            highlight=False,
            markup=False,
        )
        return 0
    keys = f"{len(prep.plans)} index key{'s' if len(prep.plans) > 1 else ''}"
    err.print(
        f"gtog eval prepare: {keys}: {built} complete, {len(prep.todo)} to build "
        f"({min(prep.concurrency, len(prep.todo))} at a time)",
        highlight=False,
        markup=False,
    )
    for plan in prep.todo[:SHOWN]:
        err.print(
            f"  {plan.key}: {plan.gap}; settings from {plan.settings_from}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    err.print(_estimate_table(prep))
    _confirm(prep, yes)
    with ExitStack() as stack:
        if local is not None and start_server:
            stack.enter_context(local.running(err))
        results = _build(prep, quiet)
    failed = [r for r in results if not r.ok]
    for r in results:
        if r.ok:
            err.print(f"built {r.key} in {r.seconds:.0f} s", highlight=False, markup=False)
    for r in failed:
        error(err, _redactor(prep)(_failure(prep, r)))
    if failed:
        err.print(
            f"built {len(results) - len(failed)} of {len(results)}; run `gtog eval prepare` again "
            "to retry what failed (graphrag's cache spares the calls already made)",
            highlight=False,
            markup=False,
        )
        return 1
    return 0


def prepare_command(
    root: Annotated[
        Path,
        typer.Option(
            "--root", "-r", help="Folder with eval_config.yaml, the dataset and projects."
        ),
    ] = Path("."),
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Eval config (default ROOT/eval_config.yaml)."),
    ] = None,
    index_key: Annotated[
        str | None, typer.Option("--index-key", "-k", help="Only these index keys (comma list).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Build without asking.")] = False,
    concurrency: Annotated[
        int | None,
        typer.Option("--concurrency", "-j", min=1, help="Indexes built at once (default: config)."),
    ] = None,
    local: Annotated[
        bool, typer.Option("--local", help="Index with the bundled local model (gtog[local]).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Build the indexes that are missing: a project per key (from indexes_template or gtog
    init's defaults), its documents, an estimate, then graphrag's indexing."""
    plan = None
    if local:
        from gtog.cli._local_support import plan_local_server

        plan = plan_local_server()
    code = build_missing(
        root,
        config=config,
        index_keys=[index_key] if index_key else None,
        yes=yes,
        quiet=quiet,
        concurrency=concurrency,
        local=plan,
    )
    if code:
        raise typer.Exit(code)

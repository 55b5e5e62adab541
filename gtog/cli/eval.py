"""`gtog eval`: run every method on every question, judge, and summarise."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gtog.errors import InputError

__all__ = ["eval_command", "register"]

err = Console(stderr=True)


def eval_command(
    root: Annotated[
        Path,
        typer.Option(
            "--root", "-r", help="Folder with eval_config.yaml, the dataset and the index projects."
        ),
    ] = Path("."),
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Eval config (default ROOT/eval_config.yaml)."),
    ] = None,
    methods: Annotated[
        str | None,
        typer.Option("--methods", "-m", help="Comma list of methods, e.g. tog,local,basic."),
    ] = None,
    imdb_key: Annotated[
        str | None, typer.Option("--imdb-key", "-k", help="Only these index keys (comma list).")
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the run in the output folder; only missing (question, method) "
            "pairs run.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Start over in a folder with results (old files kept as *.bak), or resume "
            "despite a changed dataset/judge.",
        ),
    ] = False,
    retry_errors: Annotated[
        bool,
        typer.Option("--retry-errors", help="With --resume, also rerun pairs whose search failed."),
    ] = False,
    concurrency: Annotated[
        int | None, typer.Option("--concurrency", "-j", min=1, help="Questions evaluated at once.")
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", "-n", min=1, help="First N questions per index (smoke runs)."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Output folder (overrides output.dir).")
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local",
            help="Start the bundled local model server and use it for every model of the "
            "run (needs gtog\\[local]).",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            help="Run only shard I/N of the (question, method) pairs (0 <= I < N), into "
            "OUTPUT/shard-I-of-N; combine the shards with `gtog eval merge`.",
        ),
    ] = None,
) -> None:
    """Evaluate search methods on a QA dataset with LLM judges; writes detailed and summary JSON."""
    from gtog.eval.report import print_summary
    from gtog.eval.runner import EvalOptions, prepare, run_evaluation_async, write_results
    from gtog.eval.shard import parse_shard

    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    logging.getLogger("graphrag").setLevel(logging.ERROR)
    options = EvalOptions(
        root=root,
        config_path=config,
        methods=[methods] if methods else None,
        index_keys=[imdb_key] if imdb_key else None,
        resume=resume,
        force=force,
        retry_errors=retry_errors,
        concurrency=concurrency,
        limit=limit,
        output_dir=output,
        progress=not quiet,
    )
    import asyncio
    from contextlib import ExitStack

    with ExitStack() as stack:
        if local:
            from gtog.cli.local_support import local_overrides_context

            options.model_overrides = stack.enter_context(local_overrides_context(err))
        try:
            options.shard = parse_shard(shard) if shard is not None else None
            run = prepare(options)
        except InputError as exc:
            err.print(f"[red]error:[/red] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        todo = run.todo
        part = f", shard {options.shard.label}: {len(run.pairs)} pairs" if options.shard else ""
        err.print(
            f"gtog eval: {len(run.items)} questions x {len(run.methods)} methods "
            f"({', '.join(run.methods)}){part}; {len(todo)} to run, {len(run.done)} already done"
            f" -> {run.output_dir}",
            highlight=False,
        )
        progress = Progress(
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            disable=quiet,
        )
        try:
            with progress:
                task = progress.add_task("evaluating", total=len(todo))
                asyncio.run(run_evaluation_async(run, on_record=lambda r: progress.advance(task)))
        except KeyboardInterrupt:
            err.print("interrupted: finished records are in the checkpoint; rerun with --resume")
            if run.done:
                write_results(run)
            raise typer.Exit(130) from None
        detailed, summary_path = write_results(run)
    summary = json.loads(summary_path.read_text())
    print_summary(summary, run.config.metrics)
    err.print(f"wrote {detailed}\nwrote {summary_path}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add `eval` to a typer app."""
    app.command("eval")(eval_command)

"""`gtog eval generate`: write a QA dataset (questions, answers, evidence, assertions) from
graphrag indexes, checked and de-duplicated, ready for `gtog eval` with `group_by: [type]`.

The terminal shows the plan, a progress bar, a table of what happened to the candidates
per class, and one line per kind of drop; details go to `generate.log` beside the output.
Exit codes: 0 written; 1 stopped by a fatal model error, or no question passed; 2 bad input.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from gtog.cli._say import error, warning

if TYPE_CHECKING:
    from gtog.eval.generate._run import GenerateResult, GenerationRun

__all__ = ["generate_command"]

err = Console(stderr=True)
LOG_NAME = "generate.log"


def _split(values: list[str] | None) -> list[str] | None:
    """`--index a --index b,c` -> [a, b, c] (None when not given)."""
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _plan_line(run: GenerationRun) -> str:
    o = run.options
    checks = run.draft_calls * o.per_source
    return (
        f"gtog eval generate: {len(run.plans)} indexes x {len(o.classes)} classes "
        f"({', '.join(o.classes)}), {o.n} questions per class; {run.draft_calls} generation "
        f"calls + up to {checks} check calls ({len(run.cache.entries)} answers kept from "
        f"earlier runs) -> {o.output}" + (f"; prompts: {o.prompts_dir}" if o.prompts_dir else "")
    )


def _table(result: GenerateResult, classes: tuple[str, ...], n: int) -> Table:
    table = Table(title="questions per class (all indexes)", title_justify="left")
    for column in (
        "class",
        "asked",
        "sources",
        "written",
        "dropped",
        "failed check",
        "duplicates",
        "kept",
    ):
        table.add_column(column, justify="left" if column == "class" else "right")
    for kind in classes:
        rows = [s for (_, k), s in result.stats.items() if k == kind]
        table.add_row(
            kind,
            str(n),
            str(sum(s.sources for s in rows)),
            str(sum(s.written for s in rows)),
            str(sum(sum(s.dropped.values()) for s in rows)),
            str(sum(sum(s.failed_check.values()) for s in rows)),
            str(sum(s.duplicates for s in rows)),
            str(sum(s.kept for s in rows)),
        )
    return table


def _reasons(result: GenerateResult) -> list[str]:
    """One line per kind of drop or failure, with its count over every index and class."""
    counts: dict[str, int] = {}
    for s in result.stats.values():
        for reason, k in [*s.dropped.items(), *s.failed_check.items()]:
            counts[reason] = counts.get(reason, 0) + k
        if s.failed_calls:
            what = f"unusable generation reply ({(s.example_error or '')[:80]})"
            counts[what] = counts.get(what, 0) + s.failed_calls
    return [f"{k:>5} x {reason}" for reason, k in sorted(counts.items(), key=lambda kv: -kv[1])]


def _usage(result: GenerateResult) -> str:
    t = result.usage
    usd = f", ${t.cost_usd:.4f}" if t.cost_usd is not None else ", price unknown"
    return (
        f"{t.total_calls} model calls ({result.cache_hits} answers reused), "
        f"{t.total_prompt_tokens:,} prompt + {t.total_output_tokens:,} output tokens, "
        f"{t.embedding_calls} embedding requests{usd}"
    )


def generate_command(
    root: Annotated[
        Path, typer.Option("--root", "-r", help="Folder with eval_config.yaml and the indexes.")
    ] = Path("."),
    index: Annotated[
        list[str] | None,
        typer.Option(
            "--index", "-k", help="Index keys to generate from (repeatable or a comma list)."
        ),
    ] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Questions per class, all indexes.")] = 60,
    classes: Annotated[
        str, typer.Option("--classes", help="Comma list of local, global, linked.")
    ] = "local,global,linked",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The questions file (default ROOT/questions.json)."),
    ] = None,
    per_source: Annotated[
        int, typer.Option("--per-source", min=1, help="Questions asked of each source.")
    ] = 3,
    oversample: Annotated[
        float,
        typer.Option("--oversample", min=1.0, help="Candidates asked for, per question kept."),
    ] = 2.0,
    dedup: Annotated[
        float,
        typer.Option("--dedup", help="Embedding similarity at which a question is a duplicate."),
    ] = 0.9,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sources and samples.")] = 0,
    prompts: Annotated[
        Path | None,
        typer.Option(
            "--prompts",
            help="Folder of local.txt, global.txt, linked.txt, check.txt replacing the "
            "built-in prompts (--local: those worded for the local model).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Completion model id (default: local_search's)."),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Eval config (default ROOT/eval_config.yaml)."),
    ] = None,
    concurrency: Annotated[
        int, typer.Option("--concurrency", "-j", min=1, help="Model calls at once.")
    ] = 4,
    local: Annotated[
        bool, typer.Option("--local", help="Use the bundled local model (needs gtog[local]).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing output file (the old one is kept as <name>.<time>.bak).",
        ),
    ] = False,
) -> None:
    """Generate questions (local, global, linked) with answers, evidence and assertions."""
    from gtog._errors import InputError
    from gtog._files import backup, write_json_atomic
    from gtog.eval.generate._drafts import local_model_prompts_dir
    from gtog.eval.generate._run import GenerateOptions, prepare_generation
    from gtog.llm._models import run_sync

    out = output or root / "questions.json"
    if (out.exists() or out.is_symlink()) and not force:
        error(
            err,
            f"{out} exists: gtog eval generate does not overwrite it; give another --output, "
            "or --force to replace it (the old file is kept as .bak)",
        )
        raise typer.Exit(2)
    options = GenerateOptions(
        root=root,
        output=out,
        index_keys=_split(index),
        n=n,
        classes=tuple(_split([classes]) or ()),
        per_source=per_source,
        oversample=oversample,
        dedup=dedup,
        seed=seed,
        prompts_dir=prompts,
        model_id=model,
        concurrency=concurrency,
        config_path=config,
    )
    with ExitStack() as stack:
        plan = None
        if local:
            from gtog.cli._local_support import plan_local_server

            plan = plan_local_server()
            options.model_overrides = plan.overrides
            if options.prompts_dir is None:
                options.prompts_dir = local_model_prompts_dir()
        try:
            run = run_sync(prepare_generation(options))
        except InputError as exc:
            error(err, exc)
            raise typer.Exit(2) from None
        err.print(_plan_line(run), highlight=False, markup=False, soft_wrap=True)
        if plan is not None:
            stack.enter_context(plan.running(err))
        result = _run(run, quiet)
    if not result.items:
        error(err, "no question passed: see the reasons above and " + str(out.parent / LOG_NAME))
        raise typer.Exit(1)
    kept = backup(out, copy=True) if out.exists() else None
    write_json_atomic(out, result.items)
    err.print(_table(result, options.classes, n))
    for line in _reasons(result):
        err.print(line, highlight=False, markup=False)
    for kind, short in result.shortfall.items():
        if short:
            warning(err, f"{kind}: {n - short} of {n} questions (ask more with --oversample)")
    err.print(_usage(result), highlight=False, markup=False)
    if kept is not None:
        err.print(f"the old {out.name} is kept as {kept}", highlight=False, markup=False)
    err.print(
        f"wrote {out} ({len(result.items)} questions); evaluate them with dataset: {{path: "
        f"{out.name}, group_by: [type]}} and metrics: [correctness, assertions, evidence_recall]",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def _run(run: GenerationRun, quiet: bool) -> GenerateResult:
    """Generate with a progress bar and logs captured; exit 1 on a fatal model error."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from gtog._errors import FatalRunError
    from gtog._logs import capture_logs
    from gtog._redact import Redactor, environment_secrets
    from gtog.eval.generate._run import generate
    from gtog.llm._models import run_sync

    progress = Progress(
        TextColumn("generating"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=err,
        disable=quiet,
    )
    log = run.options.output.parent / LOG_NAME
    redact = Redactor([*run.secrets, *environment_secrets(os.environ)])
    with capture_logs(log, redact), progress:
        task = progress.add_task("generating", total=run.draft_calls)
        total = [run.draft_calls]

        def more(k: int) -> None:
            total[0] += k
            progress.update(task, total=total[0])

        try:
            return run_sync(generate(run, lambda k: progress.update(task, advance=k), more))
        except FatalRunError as exc:
            error(err, redact(str(exc)), label="stopped")
            raise typer.Exit(1) from None
        except KeyboardInterrupt:
            err.print(
                f"interrupted: the answered calls are kept in {run.cache.path}; run again to "
                "continue",
                highlight=False,
                markup=False,
            )
            raise typer.Exit(130) from None

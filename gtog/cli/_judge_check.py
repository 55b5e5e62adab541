"""`gtog judge-check`: agreement of the configured LLM judges with human labels."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from gtog._errors import InputError
from gtog.cli._say import error

__all__ = ["judge_check_command", "register"]

err = Console(stderr=True)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _table(report: dict[str, Any]) -> Table:
    table = Table(
        title=f"gtog judge-check: {report['judge_model']} vs human labels",
        box=box.SIMPLE_HEAD,
        padding=(0, 1),
    )
    for col in ("metric", "n", "unscored", "accuracy", "kappa", "kappa 95% CI", "TP FN FP TN"):
        table.add_column(col, justify="left" if col == "metric" else "right", no_wrap=True)
    for metric, r in report["by_metric"].items():
        ci = r["kappa_ci95"]
        c = r["confusion"]
        table.add_row(
            metric,
            str(r["n"]),
            str(r["unscored"]),
            _fmt(r["accuracy"]),
            _fmt(r["kappa"]),
            f"[{ci[0]:.2f}, {ci[1]:.2f}]" if ci else (r["kappa_reason"] or "-"),
            " ".join(
                str(c[k])
                for k in (
                    "label_1_judge_1",
                    "label_1_judge_0",
                    "label_0_judge_1",
                    "label_0_judge_0",
                )
            ),
        )
    table.caption = (
        "accuracy and Cohen's kappa over the scored cases (a failed or tied judge is unscored); "
        "kappa interval = kappa ± 1.96 x Cohen's large-sample standard error; "
        "TP = label 1 judged 1, FN = label 1 judged 0, FP = label 0 judged 1, TN = label 0 judged 0"
    )
    return table


def judge_check_command(
    cases: Annotated[
        Path,
        typer.Option(
            "--cases",
            help="JSON list of {metric, question, ground_truth, answer, context, label}.",
        ),
    ],
    root: Annotated[
        Path,
        typer.Option("--root", "-r", help="Folder with eval_config.yaml and the index projects."),
    ] = Path("."),
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Eval config (default ROOT/eval_config.yaml)."),
    ] = None,
    index_key: Annotated[
        str | None,
        typer.Option(
            "--index-key",
            "--imdb-key",
            "-k",
            help="Use this index's judge model (default: the first index).",
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Also write the report as JSON here.")
    ] = None,
    local: Annotated[
        bool,
        typer.Option(
            "--local", help="Start the bundled local model server for the judge (gtog[local])."
        ),
    ] = False,
) -> None:
    """Run the configured judges on human-labelled answers: accuracy, Cohen's kappa, confusion."""
    from contextlib import ExitStack

    from gtog._files import write_json_atomic
    from gtog.eval.run._judge_check import run_judge_check

    logging.getLogger("LiteLLM").setLevel(logging.ERROR)
    with ExitStack() as stack:
        overrides = None
        if local:
            from gtog.cli._local_support import plan_local_server

            plan = plan_local_server()
            overrides = plan.overrides
            stack.enter_context(plan.running(err))
        try:
            report = run_judge_check(
                cases, root, config, index_key=index_key, model_overrides=overrides
            )
        except InputError as exc:
            error(err, exc)
            raise typer.Exit(2) from None
    console = Console()
    if not console.is_terminal:
        console = Console(width=140, file=console.file)
    console.print(_table(report))
    if output is not None:
        write_json_atomic(output, report)
        err.print(f"wrote {output}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add `judge-check` to a typer app."""
    app.command("judge-check")(judge_check_command)

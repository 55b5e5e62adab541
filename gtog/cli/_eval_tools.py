"""`gtog eval report`, `eval diff` and `eval merge`: a run's page, two runs compared, a
sharded run's shards combined (registered on `gtog eval` by `gtog.cli._eval`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gtog.cli._say import error
from gtog.cli._say import warning as say_warning

__all__ = ["diff_command", "merge_command", "report_command"]

err = Console(stderr=True)


def _fail(message: str, code: int) -> typer.Exit:
    error(err, message)
    return typer.Exit(code)


def report_command(
    output_dir: Annotated[
        Path,
        typer.Argument(help="A gtog eval output folder (finished, still running or interrupted)."),
    ],
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Another run's output folder: the page also shows this run's diff against "
            "it (paired tests, flipped questions).",
        ),
    ] = None,
) -> None:
    """Write a run's report.html and CSV (also mid-run, from its checkpoint).

    OUTPUT_DIR/report.html and eval_results.csv are written from the run's results, or
    rebuilt from its checkpoint while it runs or after it was interrupted.
    """
    from gtog._errors import InputError
    from gtog.eval.report._publish import write_report

    try:
        html_path, csv_path = write_report(
            output_dir.resolve(), baseline.resolve() if baseline else None
        )
    except InputError as exc:
        raise _fail(str(exc), 2) from None
    for path in (html_path, csv_path):
        err.print(f"wrote {path} ({path.stat().st_size:,} bytes)", highlight=False, markup=False)


def diff_command(
    run_a: Annotated[Path, typer.Argument(help="The earlier run (an output folder or its JSON).")],
    run_b: Annotated[Path, typer.Argument(help="The later run, compared with RUN_A.")],
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the diff as JSON to this file.")
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when some method scores significantly lower in RUN_B (Holm p < 0.05), "
            "or RUN_B lost questions RUN_A scored (failed searches, unscored judge calls, "
            "missing questions); exit 2 when no drop could be significant at these n.",
        ),
    ] = False,
    max_drop: Annotated[
        list[str] | None,
        typer.Option(
            "--max-drop",
            metavar="[METHOD:]METRIC=X",
            help="Exit 1 when a method's mean of METRIC drops by more than X in RUN_B, "
            "whatever the p-value (or RUN_B lost questions), e.g. correctness=0.05; "
            "repeatable.",
        ),
    ] = None,
    allow_judge_change: Annotated[
        bool,
        typer.Option(
            "--allow-judge-change",
            help="Gate although the runs were judged differently (judge model, prompts, "
            "sampling); without it such a gate exits 2.",
        ),
    ] = False,
) -> None:
    """Compare RUN_B with RUN_A on the questions both scored: per method and metric the
    change with a paired test, the questions that flipped, and the change in cost."""
    from gtog._errors import InputError
    from gtog._files import write_json_atomic
    from gtog.eval.results._diff import diff_runs, regressions
    from gtog.eval.results._diff_gate import check_diff
    from gtog.eval.results._diff_view import diff_table
    from gtog.eval.results._gate import check_scale, parse_gate
    from gtog.eval.results._log import read_log

    try:
        drops = [parse_gate(g, "--max-drop") for g in max_drop or []]
        log_a, log_b = read_log(run_a), read_log(run_b)
        for g in drops:
            check_scale(g, "--max-drop", drop=True, scales=log_b.spec.judge.scales)
        diff = diff_runs(log_a, log_b)
    except InputError as exc:
        raise _fail(str(exc), 2) from None
    out = Console(width=None if Console().is_terminal else 120)
    out.print(diff_table(diff, str(run_a), str(run_b)))
    if json_out is not None:
        write_json_atomic(json_out, diff)
        err.print(f"wrote {json_out}", highlight=False, markup=False)
    verdict = check_diff(
        diff,
        significance=fail_on_regression,
        max_drops=drops,
        allow_judge_change=allow_judge_change,
    )
    for note in verdict.notes:
        say_warning(err, note)
    if not (fail_on_regression or drops):  # no gate: the significant drops, as information
        for line in regressions(diff):
            err.print(f"regression: {line}", highlight=False, markup=False, style="red")
        return
    if verdict.refusal is not None:
        raise _fail(verdict.refusal, 2)
    for line in verdict.failures:
        err.print(line, highlight=False, markup=False, style="red", soft_wrap=True)
    if verdict.passed is not None:
        err.print(verdict.passed, highlight=False, markup=False, soft_wrap=True)
    if verdict.exit_code:
        raise typer.Exit(verdict.exit_code)


def merge_command(
    out: Annotated[Path, typer.Argument(help="Folder for the merged run (must hold no results).")],
    dirs: Annotated[
        list[Path], typer.Argument(help="The shard folders (OUTPUT/shard-I-of-N), all N of them.")
    ],
    partial: Annotated[
        bool,
        typer.Option(
            "--partial", help="Merge even if a shard has pairs or comparisons still to run."
        ),
    ] = False,
) -> None:
    """Merge the shards of a `gtog eval --shard` run into one output.

    The shards must share one spec, cover every (question, method) pair once and hold every
    head-to-head comparison the run asks for (else --partial, then `gtog eval --resume -o OUT`).
    """
    from gtog._errors import InputError
    from gtog.eval.results._table import print_summary
    from gtog.eval.run._merge import merge_runs

    try:
        result = merge_runs(out.resolve(), [d.resolve() for d in dirs], partial=partial)
    except InputError as exc:
        raise _fail(str(exc), 2) from None
    for label, n in result.missing.items():
        say_warning(err, f"shard {label}: {n} pairs not run")
    if result.missing_comparisons:
        say_warning(
            err,
            f"{result.missing_comparisons} comparisons in no shard: `gtog eval --resume -o "
            f"{out}` judges them",
        )
    assert result.summary is not None
    print_summary(json.loads(result.summary.read_text()), result.spec.judge.metrics)
    err.print(
        f"merged {result.shards} shards, {len(result.records)} records\n"
        f"wrote {result.detailed}\nwrote {result.summary}",
        highlight=False,
        markup=False,
    )

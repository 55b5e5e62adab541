"""`gtog eval label`: labels made in a spreadsheet in and out (registered by gtog.cli._eval)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gtog.cli._say import error

__all__ = ["label_command"]

err = Console(stderr=True)


def label_command(
    output_dir: Annotated[Path, typer.Argument(help="A gtog eval output folder.")],
    import_file: Annotated[
        Path | None,
        typer.Option(
            "--import",
            help="Add the labels of a CSV (columns question_id, method, metric, label; "
            "optional epoch, labeller, answer_hash) or JSONL file to OUTPUT/labels.jsonl.",
        ),
    ] = None,
    export_file: Annotated[
        Path | None,
        typer.Option("--export", help="Write the sample to label as a CSV for a spreadsheet."),
    ] = None,
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", help="Judge metric to label (repeatable; default: all)."),
    ] = None,
    per_method: Annotated[
        int, typer.Option("--per-method", min=1, help="Answers of each method in the sample.")
    ] = 50,
    seed: Annotated[int, typer.Option("--seed", help="The sample's seed.")] = 0,
    labeller: Annotated[
        str | None,
        typer.Option("--labeller", help="Who made imported labels that name no labeller."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option("--force", help="Replace an existing --export file (kept as .bak)."),
    ] = False,
) -> None:
    """Label answers elsewhere: export the sample, import the verdicts.

    The labels calibrate the judge and correct its means (prediction-powered inference):
    see the report's "The judge against people" and docs/judges.md. `gtog eval view` labels
    the same sample in the browser.
    """
    from gtog._errors import InputError
    from gtog._files import backup, write_atomic, write_json_atomic
    from gtog.eval.report._publish import with_calibration, write_report
    from gtog.eval.results._label_files import LabelFileError, export_sample, import_labels
    from gtog.eval.results._labels import LABELS_NAME, append_labels, labellable_metrics
    from gtog.eval.results._log import read_log
    from gtog.eval.results._spec import SUMMARY_NAME
    from gtog.eval.terminal._calibration import judge_finding

    if (import_file is None) == (export_file is None):
        error(err, "give one of --import FILE or --export FILE")
        raise typer.Exit(2)
    output_dir = output_dir.resolve()
    try:
        log = read_log(output_dir)
    except InputError as exc:
        error(err, str(exc))
        raise typer.Exit(2) from None
    metrics = labellable_metrics(log.spec.judge.metrics)
    chosen = metric or metrics
    unknown = [m for m in chosen if m not in metrics]
    if unknown:
        error(
            err,
            f"--metric {', '.join(unknown)}: not a judge metric of this run a person can label "
            f"({', '.join(metrics) or 'none'})",
        )
        raise typer.Exit(2)
    if export_file is not None:
        if export_file.exists():
            if not force:
                error(err, f"{export_file}: exists; use another name, or --force to replace it")
                raise typer.Exit(2)
            backup(export_file)
        write_atomic(export_file, export_sample(log.records, chosen, per_method, seed))
        err.print(
            f"wrote {export_file}: fill its `label` column (right or wrong), then "
            f"gtog eval label {output_dir} --import {export_file}",
            highlight=False,
            markup=False,
        )
        return
    assert import_file is not None
    try:
        labels, empty = import_labels(import_file, log.records, log.spec.judge.metrics, labeller)
    except LabelFileError as exc:
        for line in exc.lines[:20]:
            error(err, line)
        if len(exc.lines) > 20:
            error(err, f"... and {len(exc.lines) - 20} more bad rows")
        error(err, f"{import_file}: nothing imported ({len(exc.lines)} bad rows)")
        raise typer.Exit(2) from None
    append_labels(output_dir, labels)
    err.print(
        f"imported {len(labels)} labels into {output_dir / LABELS_NAME}"
        + (f" ({empty} rows left empty)" if empty else ""),
        highlight=False,
        markup=False,
    )
    summary_path = output_dir / SUMMARY_NAME
    if summary_path.is_file():
        import json

        summary = with_calibration(output_dir, json.loads(summary_path.read_text("utf-8")))
        write_json_atomic(summary_path, summary)
        write_report(output_dir)
        for name, blocks in (summary.get("calibration") or {}).items():
            err.print(judge_finding(name, blocks), highlight=False, markup=False)

"""Write `report.html` and `eval_results.csv` for an output folder (the I/O edge of the page).

The page is built from the run's detailed and summary JSON. When they are missing, or older
than the checkpoint (a run still going, or interrupted before it wrote them), both are
rebuilt in memory from `eval_checkpoint.jsonl` with the functions `gtog eval` uses itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog._files import write_atomic
from gtog.eval.report._html import render_page
from gtog.eval.report._page import page_data
from gtog.eval.results._calibration import calibration
from gtog.eval.results._flat import CSV_NAME, flat_frame
from gtog.eval.results._labels import LABELS_NAME, read_labels
from gtog.eval.results._log import read_log
from gtog.eval.results._spec import CHECKPOINT_NAME, DETAILED_NAME, SUMMARY_NAME
from gtog.eval.results._spend import cost_context
from gtog.eval.results._views import result_views

__all__ = ["REPORT_NAME", "load_run", "with_calibration", "write_report"]

REPORT_NAME = "report.html"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object")
    return data


def _from_checkpoint(output_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    log = read_log(output_dir / CHECKPOINT_NAME)
    methods = list(log.spec.methods)
    methods += [m for m in dict.fromkeys(r.method for r in log.records) if m not in methods]
    records = [r for r in log.records if r.method in methods]
    pairs = [p for p in log.pairs if p.a in methods and p.b in methods]
    return result_views(
        log.spec,
        records,
        methods,
        partial=True,
        pairs=pairs,
        cost=cost_context(output_dir),
        labels=read_labels(output_dir),
    )


def with_calibration(output_dir: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """`summary` with its calibration made anew from the folder's labels.jsonl (labels made
    after the summary was written) and the run's records."""
    log = read_log(output_dir)
    methods = [str(m) for m in (summary.get("metadata") or {}).get("methods") or log.spec.methods]
    records = [r for r in log.records if r.method in methods]
    out = {k: v for k, v in summary.items() if not k.startswith("calibration")}
    out.update(calibration(records, read_labels(output_dir), log.spec.judge.metrics, methods))
    return out


def load_run(output_dir: Path) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Detailed and summary results of a run, and whether they were rebuilt (partial)."""
    detailed_path = output_dir / DETAILED_NAME
    summary_path = output_dir / SUMMARY_NAME
    checkpoint = output_dir / CHECKPOINT_NAME
    have_json = detailed_path.is_file() and summary_path.is_file()
    if have_json:
        written = min(detailed_path.stat().st_mtime_ns, summary_path.stat().st_mtime_ns)
        if not checkpoint.is_file() or written >= checkpoint.stat().st_mtime_ns:
            detailed, summary = _read_json(detailed_path), _read_json(summary_path)
            labels_path = output_dir / LABELS_NAME
            if labels_path.is_file() and labels_path.stat().st_mtime_ns > written:
                summary = with_calibration(output_dir, summary)
            return detailed, summary, False
    if not checkpoint.is_file():
        if not output_dir.is_dir():
            raise InputError(f"{output_dir}: output folder not found")
        raise InputError(
            f"{output_dir}: no {DETAILED_NAME}, {SUMMARY_NAME} or {CHECKPOINT_NAME} to report on"
        )
    detailed, summary = _from_checkpoint(output_dir)
    return detailed, summary, True


def write_report(output_dir: Path, baseline: Path | None = None) -> tuple[Path, Path]:
    """Write `report.html` and `eval_results.csv` (atomically) for a run's output folder;
    with `baseline` (another run), the page also shows this run's diff against it."""
    detailed, summary, partial = load_run(output_dir)
    diff = None
    if baseline is not None:
        from gtog.eval.results._diff import diff_runs

        diff = diff_runs(read_log(baseline), read_log(output_dir))
    data = page_data(detailed, summary, partial=partial, diff=diff, baseline=str(baseline or ""))
    html = render_page(data)
    csv = flat_frame(detailed).to_csv(index=False, lineterminator="\n")
    html_path, csv_path = output_dir / REPORT_NAME, output_dir / CSV_NAME
    write_atomic(html_path, html)
    write_atomic(csv_path, csv)
    return html_path, csv_path

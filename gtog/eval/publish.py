"""Write `report.html` and `eval_results.csv` for an output folder (the I/O edge of the page).

The page is built from the run's detailed and summary JSON. When they are missing, or older
than the checkpoint (a run still going, or interrupted before it wrote them), both are
rebuilt in memory from `eval_checkpoint.jsonl` with the functions `gtog eval` uses itself.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from collections.abc import Iterable
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from gtog.errors import InputError
from gtog.eval.checkpoint import CHECKPOINT_NAME, read_checkpoint
from gtog.eval.dataset import QAItem
from gtog.eval.flat import CSV_NAME, flat_frame
from gtog.eval.page import page_data
from gtog.eval.pagehtml import render_page
from gtog.eval.results import DETAILED_NAME, SUMMARY_NAME, detailed_results, summarize

__all__ = [
    "REPORT_NAME",
    "add_gold_evidence",
    "load_run",
    "run_versions",
    "write_report",
    "write_text_atomic",
]

REPORT_NAME = "report.html"


def run_versions() -> dict[str, str]:
    """Installed gtog and graphrag versions (recorded in a run's metadata)."""
    out = {}
    for name in ("gtog", "graphrag"):
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = "unknown"
    return out


def add_gold_evidence(detailed: dict[str, Any], items: Iterable[QAItem]) -> dict[str, Any]:
    """Add each question's gold evidence (shape-B datasets' `context`) as `gold_evidence`."""
    evidence = {i.qid: i.evidence for i in items if i.evidence}
    for q in detailed.get("results") or []:
        if q.get("question_id") in evidence:
            q["gold_evidence"] = evidence[q["question_id"]]
    return detailed


def write_text_atomic(path: Path, text: str) -> None:
    """Write text to a temp file beside `path`, then rename it over `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


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


def _gold_evidence(detailed: dict[str, Any]) -> dict[str, str]:
    return {
        str(q.get("question_id")): q["gold_evidence"]
        for q in detailed.get("results") or []
        if isinstance(q, dict) and isinstance(q.get("gold_evidence"), str)
    }


def _from_checkpoint(
    checkpoint: Path, old_detailed: dict[str, Any] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    fingerprint, records, _ = read_checkpoint(checkpoint)
    old_meta = (old_detailed or {}).get("metadata") or {}
    methods = [m for m in old_meta.get("methods") or [] if isinstance(m, str)]
    methods += [m for m in dict.fromkeys(r.method for r in records) if m not in methods]
    meta = {
        **old_meta,
        "timestamp": dt.datetime.now().isoformat(timespec="seconds"),
        "total_questions": len({r.qid for r in records}),
        "methods": methods,
        "metrics": fingerprint.metrics,
        "index_keys": sorted({r.index_key for r in records}),
        "judge_models": fingerprint.judge_models,
        "judge_prompts": fingerprint.prompts,
        "dataset": fingerprint.dataset,
        "versions": old_meta.get("versions") or run_versions(),
        "partial": True,
    }
    detailed = detailed_results(records, methods, meta, keep_intermediate=True)
    gold = _gold_evidence(old_detailed or {})
    for q in detailed["results"]:
        if q["question_id"] in gold:
            q["gold_evidence"] = gold[q["question_id"]]
    summary = {"metadata": meta, **summarize(records, methods, fingerprint.metrics)}
    return detailed, summary


def load_run(output_dir: Path) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Detailed and summary results of a run, and whether they were rebuilt (partial)."""
    detailed_path = output_dir / DETAILED_NAME
    summary_path = output_dir / SUMMARY_NAME
    checkpoint = output_dir / CHECKPOINT_NAME
    have_json = detailed_path.is_file() and summary_path.is_file()
    if have_json:
        written = min(detailed_path.stat().st_mtime_ns, summary_path.stat().st_mtime_ns)
        if not checkpoint.is_file() or written >= checkpoint.stat().st_mtime_ns:
            return _read_json(detailed_path), _read_json(summary_path), False
    if not checkpoint.is_file():
        if not output_dir.is_dir():
            raise InputError(f"{output_dir}: output folder not found")
        raise InputError(
            f"{output_dir}: no {DETAILED_NAME}, {SUMMARY_NAME} or {CHECKPOINT_NAME} to report on"
        )
    old = _read_json(detailed_path) if detailed_path.is_file() else None
    detailed, summary = _from_checkpoint(checkpoint, old)
    return detailed, summary, True


def write_report(output_dir: Path) -> tuple[Path, Path]:
    """Write `report.html` and `eval_results.csv` (atomically) for a run's output folder."""
    detailed, summary, partial = load_run(output_dir)
    html = render_page(page_data(detailed, summary, partial=partial))
    csv = flat_frame(detailed).to_csv(index=False, lineterminator="\n")
    html_path, csv_path = output_dir / REPORT_NAME, output_dir / CSV_NAME
    write_text_atomic(html_path, html)
    write_text_atomic(csv_path, csv)
    return html_path, csv_path

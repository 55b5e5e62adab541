"""Where a benchmark writes its results file.

By default into `benchmarks/out/` (git-ignored), so running a benchmark never changes a
tracked file. With `--record` into `benchmarks/results/`, the tracked files the
documentation quotes (docs/measured.md and the pages it lists): record a run only when
its figures are the ones to publish.

    from recording import add_record_flag, results_path
    add_record_flag(parser)
    path = results_path("throughput.json", args.record)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["OUT", "RECORDED", "add_record_flag", "results_path", "write_results"]

BENCHMARKS = Path(__file__).resolve().parent
RECORDED = BENCHMARKS / "results"
"""Tracked results: what the documentation quotes (written only with --record)."""
OUT = BENCHMARKS / "out"
"""Scratch results of every other run (git-ignored)."""


def add_record_flag(parser: argparse.ArgumentParser) -> None:
    """Add `--record` (write the tracked file under benchmarks/results/) to `parser`."""
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the tracked results file under benchmarks/results/ (the documented "
        "figures) instead of benchmarks/out/",
    )


def results_path(name: str, record: bool) -> Path:
    """`benchmarks/results/NAME` with `record`, else `benchmarks/out/NAME` (folder made)."""
    folder = RECORDED if record else OUT
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


def write_results(name: str, data: Any, record: bool) -> Path:
    """Write `data` as indented JSON to `results_path(name, record)`; return the path."""
    path = results_path(name, record)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path

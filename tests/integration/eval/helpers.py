"""Shared helpers for the `gtog eval` integration tests."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.scripted_server import LogEntry
from tests.support.world import EXAMPLE_QA

LOCAL_MARKER = "-----Entities-----"


def make_eval_root(
    tmp_path: Path,
    indexes: dict[str, Path],
    *,
    methods: tuple[str, ...] = ("local", "basic"),
    extra: str = "",
) -> Path:
    """An eval root: eval_config.yaml + the example dataset, indexes by absolute path."""
    root = tmp_path / "evalroot"
    root.mkdir()
    (root / "qa.json").write_text(EXAMPLE_QA.read_text())
    index_lines = "\n".join(f"  {k}: {p}" for k, p in indexes.items())
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{index_lines}\n"
        f"methods: [{', '.join(methods)}]\noutput:\n  dir: results\nconcurrency: 4\n{extra}"
    )
    return root


def load_results(root: Path) -> tuple[dict, dict]:
    """The detailed and summary JSON of a run."""
    out = root / "results"
    return (
        json.loads((out / "eval_results_detailed.json").read_text()),
        json.loads((out / "eval_results_summary.json").read_text()),
    )


def search_method(entry: LogEntry) -> str | None:
    """Which engine sent a search request (local search's context has an entity table)."""
    if entry.rule != "search:answer":
        return None
    system = entry.request["messages"][0]["content"]
    return "local" if LOCAL_MARKER in system else "basic"


def question_of(entry: LogEntry) -> str:
    """The user question of a search request."""
    return entry.request["messages"][-1]["content"]

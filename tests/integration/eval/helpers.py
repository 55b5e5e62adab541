"""Shared helpers for the `gtog eval` integration tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.projects import start_gtog, subprocess_env
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


def add_judge_prompts(root: Path) -> None:
    """Point the root's config at a new judge prompt folder (one `completeness` prompt)."""
    prompts = root / "judge_prompts"
    prompts.mkdir()
    (prompts / "completeness.txt").write_text(
        "Question: {question}\nAnswer: {answer}\njudge if the answer fully addresses it.\n"
        'Return JSON: {"reason": "...", "score": 0 or 1}'
    )
    with (root / "eval_config.yaml").open("a") as f:
        f.write("judge:\n  prompts_dir: judge_prompts\n")


def start_eval(root: Path) -> Any:
    """`gtog eval` over the first 4 questions, one at a time, in the background (a process
    to poll and SIGKILL: `pid`, `poll()`, `kill()`, `wait(timeout=...)`)."""
    return start_gtog("eval", "--root", str(root), "--limit", "4", "-j", "1")


def checkpoint_keys(path: Path) -> list[tuple[str, str]]:
    """(question id, method) of each complete record line, duplicates kept (split on b"\\n"
    only, as gtog does: text may hold U+2028, which `splitlines()` takes for a line end)."""
    if not path.exists():
        return []
    keys = []
    for line in path.read_bytes().split(b"\n")[1:]:
        try:
            r = json.loads(line)
        except ValueError:  # a torn last line (perhaps mid-character), or the empty tail
            continue
        keys.append((r["qid"], r["method"]))
    return keys


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


def run_probe(code: str, *argv: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """Run `code` in a plain process (the tests' zygote has every client imported already);
    the process and what it said (its `name: [json]` lines)."""
    probe = subprocess.run(
        [sys.executable, "-c", code, *argv],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr
    said = dict(line.split(": ", 1) for line in probe.stdout.splitlines() if ": [" in line)
    return probe, said

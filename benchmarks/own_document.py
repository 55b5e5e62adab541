#!/usr/bin/env python
"""Benchmark the tutorial "Your own document, offline": init, index, query and eval of a
new text with the local model, in a fresh folder, as docs/tutorials/own-document.md says.

    python benchmarks/own_document.py                  # benchmarks/out/own_document.json
    python benchmarks/own_document.py --record         # benchmarks/results/ (the docs' figures)

In a new temporary folder it runs the page's commands (`gtog init --local`,
`gtog index --local`, `gtog query --local`, `gtog eval --local`) with
`benchmarks/data/own_document.txt` (our own 1,059-word story) as the document and the
page's own `qa.json` and `eval_config.yaml`, and records each step's wall time and exit
code, the index's size, the replies the server cut at max_tokens (its log), the answers and
the verdict line, and the extraction replies' lengths (those over 1,024 tokens are the
ones the local server's own cap, which applied before issue 32, cut). The machine's load
average is recorded: the local model shares its 2 cores.
Needs the gtog[local] extra.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "tutorials" / "own-document.md"
DOCUMENT = REPO / "benchmarks" / "data" / "own_document.txt"


def readme_study() -> tuple[list[list[str]], str, str]:
    """The page's `gtog` commands (in order), its qa.json and its eval_config.yaml."""
    import shlex

    section = PAGE.read_text(encoding="utf-8")
    [block] = re.findall(r"```bash\n(.*?)```", section, re.S)
    commands = [
        words[1:]
        for line in block.splitlines()
        for words in [shlex.split(line, comments=True)]
        if words[:1] == ["gtog"]
    ]
    [qa] = re.findall(r"```json\n(.*?)```", section, re.S)
    [config] = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return commands, qa, config


def server_stats(log: Path) -> dict[str, Any]:
    """Chat requests, tokens, seconds and finish reasons from the local server's log."""
    pattern = re.compile(r"chat (\d+)\+(\d+) tokens in ([\d.]+)s.*? finish=(\w+)")
    rows = [m.groups() for m in pattern.finditer(log.read_text())] if log.exists() else []
    finishes: dict[str, int] = {}
    for *_, finish in rows:
        finishes[finish] = finishes.get(finish, 0) + 1
    return {
        "chat_requests": len(rows),
        "requests": [[int(r[0]), int(r[1]), float(r[2]), r[3]] for r in rows],
        "prompt_tokens": sum(int(r[0]) for r in rows),
        "output_tokens": sum(int(r[1]) for r in rows),
        "chat_seconds": round(sum(float(r[2]) for r in rows), 1),
        "max_output_tokens": max((int(r[1]) for r in rows), default=0),
        "finish_reasons": finishes,
    }


def index_size(project: Path) -> dict[str, Any]:
    """Rows of the index's main tables, and the entity names."""
    import pandas as pd

    out = project / "output"
    rows = {
        name: len(pd.read_parquet(out / f"{name}.parquet"))
        for name in ("text_units", "entities", "relationships", "communities", "community_reports")
        if (out / f"{name}.parquet").exists()
    }
    entities = out / "entities.parquet"
    titles = sorted(pd.read_parquet(entities)["title"]) if entities.exists() else []
    return {"rows": rows, "entities": titles}


def extraction_replies(step: dict[str, Any]) -> dict[str, Any]:
    """The extraction replies' output tokens: the requests after the model check, one per
    text unit (graphrag extracts first, one request at a time, before any summary).

    The server samples with a fixed seed, so a reply's first 1,024 tokens are the same
    under any cap: the replies longer than that are those the server's own 1,024-token
    cap (which applied before `max_tokens: 3000`) cut.
    """
    units = step.get("index", {}).get("rows", {}).get("text_units", 0)
    replies = step["server"]["requests"][1 : 1 + units]
    outputs = [r[1] for r in replies]
    return {
        "replies": len(replies),
        "output_tokens": outputs,
        "finish_reasons": [r[3] for r in replies],
        "longer_than_1024": sum(1 for n in outputs if n > 1024),
    }


def run(args: list[str], cwd: Path, log: Path) -> dict[str, Any]:
    """One `gtog` command: its wall time, exit code and stderr's last lines."""
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
        GTOG_LOCAL_SERVER_LOG=str(log),
    )
    print("running: gtog", " ".join(args), flush=True)
    load = os.getloadavg()[0]
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "gtog", *args], cwd=cwd, env=env, text=True, capture_output=True
    )
    wall = time.monotonic() - started
    print(f"  {wall:.0f} s, exit {proc.returncode}", flush=True)
    return {
        "command": "gtog " + " ".join(args),
        "wall_seconds": round(wall, 1),
        "returncode": proc.returncode,
        "load_average_at_start": round(load, 2),
        "load_average_at_end": round(os.getloadavg()[0], 2),
        "stdout_tail": proc.stdout[-3000:],
        "stderr_tail": "\n".join(
            line for line in proc.stderr.splitlines()[-40:] if "WARN lance" not in line
        ),
        "server": server_stats(log),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    add_record_flag(parser)
    args = parser.parse_args(argv)
    commands, qa, config = readme_study()
    work = args.keep or Path(tempfile.mkdtemp(prefix="gtog-own-document-"))
    study = work / "my-study"
    shutil.rmtree(study, ignore_errors=True)
    study.mkdir(parents=True)
    steps: dict[str, Any] = {}
    init, index, query, evaluate = commands
    steps["init"] = run(init, study, work / "init.server.log")
    project = study / init[init.index("--root") + 1]
    shutil.copy(DOCUMENT, project / "input" / DOCUMENT.name)
    steps["index"] = run(index, study, work / "index.server.log")
    steps["index"]["index"] = index_size(project)
    steps["index"]["extraction"] = extraction_replies(steps["index"])
    steps["query"] = run(query, study, work / "query.server.log")
    (study / "qa.json").write_text(qa)
    (study / "eval_config.yaml").write_text(config)
    steps["eval"] = run(evaluate, study, work / "eval.server.log")
    summary_path = study / "results" / "eval_results_summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
    verdict = None
    if summary is not None:
        from gtog.eval.results._verdict import verdict as verdict_of

        verdict = verdict_of(summary)
    result = {
        "document": str(DOCUMENT.relative_to(REPO)),
        "document_words": len(DOCUMENT.read_text().split()),
        "qa": json.loads(qa),
        "eval_config": config,
        "steps": steps,
        "total_seconds": round(sum(s["wall_seconds"] for s in steps.values()), 1),
        "verdict": verdict,
        "by_method": {
            m: {k: g["same_questions"].get(k) for k in ("correctness", "token_recall")}
            for m, g in (summary or {}).get("by_method", {}).items()
        },
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "note": "2 CPU cores shared with other jobs; see each step's load average",
        },
    }
    path = write_results("own_document.json", result, args.record)
    print(f"total {result['total_seconds']:.0f} s; wrote {path}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return max(s["returncode"] for s in steps.values())


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""From documents to a decision, offline: prepare + generate + eval with `--local`, timed.

    python benchmarks/documents_to_decision.py            # results in benchmarks/out/
    python benchmarks/documents_to_decision.py --record   # benchmarks/results/ (the README's)

Copies eval/documents_demo (eval_config.yaml and ferry.txt, a ~1,000-word story; no
index, no questions) into a fresh folder under benchmarks/out/, then runs the three
commands of its eval_config.yaml, each starting and stopping the local model server:

    gtog eval prepare --root W --local --yes
    gtog eval generate --root W --local --n N
    gtog eval --root W --local

and records each command's wall time and exit code, the local server's chat requests and
tokens per command (its log), the indexing estimate printed before the build against the
requests the build made, the questions written per class, and the evaluation's summary by
type with the assertions scorer. Needs the gtog[local] extra.
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
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from recording import OUT, add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "eval" / "documents_demo"


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _server(log: Path) -> dict[str, Any]:
    """Chat requests, tokens and seconds from the local server's log."""
    if not log.exists():
        return {"chat_requests": 0}
    rows = [
        tuple(map(float, m.groups()))
        for m in re.finditer(r"chat (\d+)\+(\d+) tokens in ([\d.]+)s", log.read_text())
    ]
    if not rows:
        return {"chat_requests": 0}
    prompt, output, seconds = (sum(col) for col in zip(*rows, strict=True))
    return {
        "chat_requests": len(rows),
        "prompt_tokens": int(prompt),
        "output_tokens": int(output),
        "chat_seconds": round(seconds, 1),
    }


def _run(name: str, args: list[str], work: Path) -> dict[str, Any]:
    log = work / f"{name}.server.log"
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
        GTOG_LOCAL_SERVER_LOG=str(log),
    )
    command = [sys.executable, "-m", "gtog", *args]
    print("running: gtog", " ".join(args), flush=True)
    started = time.monotonic()
    proc = subprocess.run(command, cwd=REPO, env=env, text=True, capture_output=True)
    wall = time.monotonic() - started
    sys.stderr.write(proc.stderr[-3000:])
    print(f"  {wall:.0f} s, exit {proc.returncode}", flush=True)
    return {
        "command": "gtog " + " ".join(a if a != str(work) else "W" for a in args),
        "returncode": proc.returncode,
        "wall_seconds": round(wall, 1),
        "server": _server(log),
        "stderr_tail": proc.stderr[-2500:],
        "stdout_tail": proc.stdout[-2500:],
    }


def _estimate(stderr: str) -> dict[str, Any] | None:
    """The estimate table's row for the key (chunks, calls) as printed before the build."""
    m = re.search(r"ferry\s*│\s*(\d+)\s*│\s*([\d,]+)\s*│\s*(\d+)\s*│\s*(\d+) \+ ~(\d+)", stderr)
    if m is None:
        return None
    docs, tokens, chunks, extraction, rest = m.groups()
    return {
        "documents": int(docs),
        "tokens": int(tokens.replace(",", "")),
        "chunks": int(chunks),
        "extraction_calls": int(extraction),
        "other_calls_assumed": int(rest),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2, help="questions per class (default 2)")
    add_record_flag(parser)
    args = parser.parse_args(argv)

    work = OUT / "documents_to_decision"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for name in ("eval_config.yaml", "ferry.txt"):
        shutil.copy(DEMO / name, work / name)
    config = work / "eval_config.yaml"  # the judge prompts' path, from the copy
    config.write_text(
        config.read_text().replace(
            "../../gtog/local/judge_prompts", str(REPO / "gtog" / "local" / "judge_prompts")
        )
    )
    root = str(work)
    steps = {
        "prepare": _run("prepare", ["eval", "prepare", "--root", root, "--local", "--yes"], work),
    }
    if steps["prepare"]["returncode"] == 0:
        steps["generate"] = _run(
            "generate", ["eval", "generate", "--root", root, "--local", "--n", str(args.n)], work
        )
    if steps.get("generate", {}).get("returncode") == 0:
        steps["eval"] = _run("eval", ["eval", "--root", root, "--local", "-q"], work)
    questions_file = work / "questions.json"
    questions = json.loads(questions_file.read_text()) if questions_file.exists() else []
    summary_file = work / "results" / "eval_results_summary.json"
    summary = json.loads(summary_file.read_text()) if summary_file.exists() else None
    stats = work / "ferry" / "output" / "stats.json"
    result = {
        "document": {
            "file": "eval/documents_demo/ferry.txt",
            "words": len((DEMO / "ferry.txt").read_text().split()),
        },
        "total_wall_seconds": round(sum(s["wall_seconds"] for s in steps.values()), 1),
        "steps": steps,
        "estimate": _estimate(steps["prepare"]["stderr_tail"]),
        "index_workflow_seconds": (
            {
                k: round(v["overall"], 1)
                for k, v in json.loads(stats.read_text())["workflows"].items()
            }
            if stats.exists()
            else None
        ),
        "questions": questions,
        "questions_by_type": {
            t: sum(q["type"] == t for q in questions) for t in ("local", "global", "linked")
        },
        "summary": {k: summary.get(k) for k in ("by_method", "by_group", "assertions", "metadata")}
        if summary
        else None,
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average_after": os.getloadavg(),
        },
        "versions": {
            d: _version(d) for d in ("gtog", "graphrag", "llama-cpp-python", "onnxruntime")
        },
        "models": {
            "chat": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (llama.cpp, CPU)",
            "embeddings": "all-MiniLM-L6-v2 int8 ONNX (384 dims)",
        },
    }
    path = write_results("documents_to_decision.json", result, args.record)
    codes = [s["returncode"] for s in steps.values()]
    print(f"total {result['total_wall_seconds']:.0f} s, exit codes {codes}; wrote {path}")
    return max(codes) if len(codes) == 3 else 1


if __name__ == "__main__":
    sys.exit(main())

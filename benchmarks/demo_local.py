#!/usr/bin/env python
"""Benchmark the README's offline demo: `gtog eval --local` on the bundled example.

    python benchmarks/demo_local.py                 # the README command
    python benchmarks/demo_local.py -- --limit 1    # extra arguments for `gtog eval`
    python benchmarks/demo_local.py --config eval/tog_3x3.yaml --name demo_tog_3x3 -- -m tog

Runs the demo command once (the local model server is started and stopped by
`gtog eval --local` itself), measures its wall time, and records the answers and judge
scores from the eval output folder (eval_results_summary.json and
eval_results_detailed.json) into benchmarks/out/demo_local.json (with `--record`:
benchmarks/results/, the file the docs and the README's output table quote), with the
machine's CPU count and the versions involved. Needs the gtog[local] extra.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "eval" / "results" / "demo_local"

# The demo's eval config (paths relative to the repo). Sized for 2 CPU cores: one judge
# metric with reason-first prompts (a 1.5B judge is near chance when asked for the score
# alone), a narrow and shallow ToG, one question at a time (the server serves one request
# at a time anyway).
DEFAULT_CONFIG = REPO / "eval_config.yaml"
"""The example config the README's first command uses."""

# Keep in step with the README's first command.
DEMO_ARGS = ["eval", "--local", "--limit", "3"]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _records(detailed: object) -> list[dict]:
    """The per-(question, method) records of eval_results_detailed.json, whatever its nesting."""
    if isinstance(detailed, list):
        return [r for r in detailed if isinstance(r, dict)]
    if isinstance(detailed, dict):
        for key in ("records", "results", "items", "details"):
            if isinstance(detailed.get(key), list):
                return [r for r in detailed[key] if isinstance(r, dict)]
    return []


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


def _slim(record: dict) -> dict:
    """A record without bulky context text."""
    drop = {"context", "context_text", "sources", "retrieved", "intermediate", "context_data"}
    return {k: v for k, v in record.items() if k not in drop}


def _server_stats(log: Path) -> dict | None:
    """Chat requests, tokens and seconds from the local server's log."""
    import re

    if not log.exists():
        return None
    pattern = re.compile(r"chat (\d+)\+(\d+) tokens in ([\d.]+)s")
    rows = [tuple(map(float, m.groups())) for m in pattern.finditer(log.read_text())]
    if not rows:
        return {"chat_requests": 0}
    prompt, output, seconds = (sum(col) for col in zip(*rows, strict=True))
    return {
        "chat_requests": len(rows),
        "prompt_tokens": int(prompt),
        "output_tokens": int(output),
        "chat_seconds": round(seconds, 1),
        "max_request_seconds": max(r[2] for r in rows),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", help="extra `gtog eval` arguments (after --)")
    parser.add_argument("--keep", action="store_true", help="keep an existing output folder")
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="eval config (default: the repo's eval_config.yaml, as in the README)",
    )
    parser.add_argument(
        "--name", default="demo_local", help="results file name (NAME.json; default demo_local)"
    )
    add_record_flag(parser)
    args = parser.parse_args(argv)
    config = args.config or DEFAULT_CONFIG

    if not args.keep and OUTPUT.exists():
        shutil.rmtree(OUTPUT)
    command = [
        sys.executable, "-m", "gtog", *DEMO_ARGS,
        "--root", str(REPO), "--config", str(config), "--output", str(OUTPUT), *args.extra,
    ]  # fmt: skip
    server_log = OUTPUT.parent / "demo_local.server.log"
    server_log.parent.mkdir(parents=True, exist_ok=True)
    server_log.unlink(missing_ok=True)
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_PROXY="127.0.0.1,localhost",
        GTOG_LOCAL_SERVER_LOG=str(server_log),
    )
    print("running:", " ".join(command[2:]), flush=True)
    started = time.monotonic()
    proc = subprocess.run(command, cwd=REPO, env=env, text=True, capture_output=True)
    wall = time.monotonic() - started
    sys.stderr.write(proc.stderr[-4000:])
    print(proc.stdout[-4000:])

    summary_path = OUTPUT / "eval_results_summary.json"
    detailed_path = OUTPUT / "eval_results_detailed.json"
    summary = json.loads(summary_path.read_text()) if summary_path.exists() else None
    detailed = json.loads(detailed_path.read_text()) if detailed_path.exists() else None
    result = {
        "command": "gtog " + " ".join([*DEMO_ARGS, "--config", _rel(config), *args.extra]),
        "config": config.read_text(),
        "returncode": proc.returncode,
        "wall_seconds": round(wall, 1),
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "versions": {
            d: _version(d) for d in ("gtog", "graphrag", "llama-cpp-python", "onnxruntime")
        },
        "models": {
            "chat": "Qwen2.5-Coder-1.5B-Instruct Q4_K_M (llama.cpp, CPU)",
            "embeddings": "all-MiniLM-L6-v2 int8 ONNX (384 dims)",
        },
        "summary": summary,
        "answers": [_slim(r) for r in _records(detailed)],
        "server_requests": _server_stats(server_log),
        "stderr_tail": proc.stderr[-2000:] if proc.returncode else "",
    }
    path = write_results(f"{args.name}.json", result, args.record)
    print(f"wall time {wall:.0f} s, return code {proc.returncode}; wrote {path}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

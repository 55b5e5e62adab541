"""LLM calls and tokens per question: tog vs local vs basic, with ToG's paper bound.

Default: index the two example stories with real graphrag against the scripted
OpenAI-compatible server (tests/support), run `gtog eval` with all three methods on all
10 example questions, and report per-method calls and tokens from the run's summary.
Calls and prompt sizes are those of the real engines; token counts are the scripted
server's (words and punctuation marks, not BPE tokens), so compare methods, not models.

`--summary PATH` reports from an existing `eval_results_summary.json` instead (e.g. a
run against a real model, or the local-model demo).

    python benchmarks/calls_per_method.py [--width 3 --depth 3] [--summary PATH]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "calls_per_method.json"


def run_scripted(width: int, depth: int) -> tuple[dict, dict]:
    """Index the example stories and evaluate all methods against the scripted server."""
    from tests.support.projects import index_project, subprocess_env, write_project
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    work = Path(tempfile.mkdtemp(prefix="gtog-bench-"))
    try:
        with ScriptedServer(rules) as server:
            for key in ("lighthouse", "orchard"):
                index_project(write_project(work / key, key, server.base_url))
            shutil.copy(REPO / "eval" / "qa_eval.json", work / "qa.json")
            (work / "eval_config.yaml").write_text(
                "dataset: {path: qa.json}\n"
                f"indexes: {{lighthouse: {work / 'lighthouse'}, orchard: {work / 'orchard'}}}\n"
                "methods: [tog, local, basic]\noutput: {dir: results}\n"
                f"tog_search: {{width: {width}, depth: {depth}}}\n"
            )
            server.clear_log()
            started = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "gtog", "eval", "--root", str(work), "-q"],
                env=subprocess_env(),
                capture_output=True,
                text=True,
            )
            if proc.returncode != 0:
                raise SystemExit(proc.stderr)
            wall = time.perf_counter() - started
        summary = json.loads((work / "results" / "eval_results_summary.json").read_text())
        detailed = json.loads((work / "results" / "eval_results_detailed.json").read_text())
        meta = {"source": "scripted server", "wall_seconds": round(wall, 1)}
        return summary, {"detailed": detailed, **meta}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(summary: dict, detailed: dict | None, width: int, depth: int) -> dict:
    """Per-method averages (and ToG's max) with the paper bound."""
    rows = {}
    for method, eff in summary["efficiency"].items():
        row = {
            "avg_llm_calls": eff["avg_llm_calls"],
            "avg_prompt_tokens": eff["avg_prompt_tokens"],
            "avg_output_tokens": eff["avg_output_tokens"],
            "correctness": summary["by_method"][method].get("correctness"),
            "n": eff["n"],
        }
        if detailed:
            calls = [
                q["methods"][method]["efficiency"]["llm_calls"]
                for q in detailed["results"]
                if q["methods"].get(method, {}).get("efficiency")
            ]
            row["max_llm_calls"] = max(calls) if calls else None
        rows[method] = row
    return {"width": width, "depth": depth, "paper_bound": 2 * width * depth + depth + 1, **rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=3)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--summary", type=Path, help="report from this summary JSON instead")
    add_record_flag(parser)
    args = parser.parse_args()
    if args.summary:
        summary, extra = json.loads(args.summary.read_text()), {"source": str(args.summary)}
        detailed_path = args.summary.with_name("eval_results_detailed.json")
        detailed = json.loads(detailed_path.read_text()) if detailed_path.exists() else None
    else:
        summary, extra = run_scripted(args.width, args.depth)
        detailed = extra.pop("detailed")
    result = {**report(summary, detailed, args.width, args.depth), **extra}
    written = write_results(RESULTS, result, args.record)
    print("| method | avg LLM calls | max | bound | avg prompt tok | avg output tok |")
    print("|---|---:|---:|---:|---:|---:|")
    for method in ("tog", "local", "basic"):
        if method in result:
            r = result[method]
            bound = result["paper_bound"] if method == "tog" else "-"
            print(
                f"| {method} | {r['avg_llm_calls']:.1f} | {r.get('max_llm_calls', '-')} | {bound} "
                f"| {r['avg_prompt_tokens']:.0f} | {r['avg_output_tokens']:.0f} |"
            )
    print(f"\n({result['source']}; written to {written.relative_to(REPO)})")


if __name__ == "__main__":
    main()

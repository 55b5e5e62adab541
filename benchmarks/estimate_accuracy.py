"""What will it cost? The bounds and pilot estimates against the run they estimate, and
what the model-call cache saves on a second run.

Indexes the two example stories with real graphrag against the scripted server
(tests/support), then on all 10 example questions with tog, local, basic, global and
drift and the four judges:

1. `gtog eval --estimate` (bounds: no model call);
2. `gtog eval --estimate --pilot K` (K questions per method run for real);
3. `gtog eval --resume` (goes on from the pilot) -- the actual spend;
4. `gtog eval --force` (the same run from nothing: every reply from the cache).

Token counts are the scripted server's (words, not BPE tokens) and USD is LiteLLM's
gpt-4o-mini / text-embedding-3-small price for them: compare the estimates with the
actual, not with a real model's bill.

    python benchmarks/estimate_accuracy.py [--pilot 3] [--record]
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
from typing import Any

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "estimate_accuracy.json"
METHODS = ("tog", "local", "basic", "global", "drift")
FIGURES = ("llm_calls", "prompt_tokens", "output_tokens", "usd")


def _gtog(work: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    from tests.support.projects import subprocess_env

    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "gtog", "eval", "--root", str(work), "-q", *args],
        env=subprocess_env(),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return proc, time.perf_counter() - started


def _actual(summary: dict[str, Any], detailed: dict[str, Any]) -> dict[str, Any]:
    """The run's spend, as the estimate counts it (embedding requests in the calls)."""
    out: dict[str, Any] = {"methods": {}, "judges": {}}
    for m in METHODS:
        e = summary["efficiency"][m]
        out["methods"][m] = {
            "llm_calls": e["total_llm_calls"] + e["total_embedding_calls"],
            "prompt_tokens": e["total_prompt_tokens"] + e["total_embedding_tokens"],
            "output_tokens": e["total_output_tokens"],
            "usd": e["usd_total"],
        }
    usage = [e["judge_usage"] for q in detailed["results"] for e in q["methods"].values()]
    for metric in sorted({k for u in usage for k in u}):
        rows = [u[metric] for u in usage if metric in u]
        out["judges"][metric] = {
            "llm_calls": sum(r["llm_calls"] for r in rows),
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "output_tokens": sum(r["output_tokens"] for r in rows),
            "usd": sum(r["cost_usd"] for r in rows),
        }
    rows = [*out["methods"].values(), *out["judges"].values()]
    out["total"] = {f: sum(r[f] for r in rows) for f in FIGURES}
    out["per_question"] = {
        m: {
            q["question_id"]: [
                e["llm_calls"] + e["embedding_calls"],
                e["prompt_tokens"] + e["embedding_tokens"],
                e["output_tokens"],
                e["cost_usd"],
            ]
            for q in detailed["results"]
            for e in [q["methods"][m]["efficiency"]]
        }
        for m in METHODS
    }
    return out


def _ratios(estimate: dict[str, Any], actual: dict[str, Any]) -> dict[str, Any]:
    """estimate / actual per row and figure."""

    def ratio(a: float | None, b: float) -> float | None:
        return None if a is None or not b else round(a / b, 3)

    out: dict[str, Any] = {}
    for group in ("methods", "judges"):
        for name, real in actual[group].items():
            guess = estimate[group].get(name) or {}
            out[f"{group[:-1]} {name}"] = {f: ratio(guess.get(f), real[f]) for f in FIGURES}
    whole = {
        f: sum(
            (estimate[g].get(n) or {}).get(f) or 0 for g in ("methods", "judges") for n in actual[g]
        )
        for f in FIGURES
    }
    out["total"] = {f: ratio(whole[f], actual["total"][f]) for f in FIGURES}
    return out


def run(pilot: int) -> dict[str, Any]:
    from tests.support.projects import index_project, write_project
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    work = Path(tempfile.mkdtemp(prefix="gtog-estimate-"))
    try:
        with ScriptedServer(rules) as server:
            for key in ("lighthouse", "orchard"):
                index_project(write_project(work / key, key, server.base_url))
            shutil.copy(REPO / "eval" / "qa_eval.json", work / "qa.json")
            (work / "eval_config.yaml").write_text(
                "dataset: {path: qa.json}\n"
                f"indexes: {{lighthouse: {work / 'lighthouse'}, orchard: {work / 'orchard'}}}\n"
                f"methods: [{', '.join(METHODS)}]\noutput: {{dir: results}}\n"
                "tog_search: {width: 2, depth: 2}\n"
            )
            out = work / "results"
            server.clear_log()
            _, bounds_s = _gtog(work, "--estimate")
            bounds = json.loads((out / "estimate.json").read_text())
            bounds_requests = len(server.log)
            _, pilot_s = _gtog(work, "--estimate", "--pilot", str(pilot))
            estimate = json.loads((out / "estimate.json").read_text())
            pilot_requests = len(server.log) - bounds_requests
            _, run_s = _gtog(work, "--resume")
            run_requests = len(server.log) - bounds_requests - pilot_requests
            summary = json.loads((out / "eval_results_summary.json").read_text())
            detailed = json.loads((out / "eval_results_detailed.json").read_text())
            server.clear_log()
            _, again_s = _gtog(work, "--force")
            again = json.loads((out / "eval_results_summary.json").read_text())
            again_requests = len(server.log)
        actual = _actual(summary, detailed)
        return {
            "source": "scripted server; 10 questions x 5 methods, 4 judges",
            "pilot_questions": pilot,
            "bounds": {
                "estimate": bounds,
                "vs_actual": _ratios(bounds, actual),
                "seconds": round(bounds_s, 1),
                "requests": bounds_requests,
            },
            "pilot": {
                "estimate": estimate,
                "vs_actual": _ratios(estimate, actual),
                "seconds": round(pilot_s, 1),
                "requests": pilot_requests,
            },
            "actual": {**actual, "seconds": round(run_s, 1), "requests": run_requests},
            "second_run": {
                "requests": again_requests,
                "seconds": round(again_s, 1),
                "cost": again["cost"],
            },
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pilot", type=int, default=3)
    add_record_flag(parser)
    args = parser.parse_args()
    data = run(args.pilot)
    path = write_results(RESULTS, data, args.record)
    print(f"{'row':<22} {'bounds/actual':>14} {'pilot/actual':>13}   (USD)")
    for row, ratios in data["pilot"]["vs_actual"].items():
        bound = data["bounds"]["vs_actual"][row]["usd"]
        print(f"{row:<22} {bound!s:>14} {ratios['usd']!s:>13}")
    print(f"second run: {data['second_run']['requests']} requests; wrote {path}")


if __name__ == "__main__":
    main()

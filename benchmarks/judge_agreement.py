#!/usr/bin/env python
"""How often does the local model's correctness judge agree with a human label?

    python benchmarks/judge_agreement.py                                 # gtog/local/judge_prompts
    python benchmarks/judge_agreement.py --prompts gtog/eval/prompts     # the design's prompts
    python benchmarks/judge_agreement.py --prompts DIR --prompts DIR2    # compare prompt sets

Starts the local model server (the gtog[local] extra), runs gtog's own correctness judge
(`gtog.eval.judges.judge`, JSON mode, temperature 0, as `gtog eval` does) on the labelled
cases in benchmarks/data/judge_cases.json, and writes agreement, the confusion counts and
the wall time per prompt set to benchmarks/results/judge_agreement.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "benchmarks" / "data" / "judge_cases.json"
RESULT = REPO / "benchmarks" / "results" / "judge_agreement.json"
DEFAULT_PROMPTS = REPO / "gtog" / "local" / "judge_prompts"


async def _score(prompts_dir: Path, cases: list[dict[str, Any]], info: Any) -> dict[str, Any]:
    from gtog.eval.judges import judge, load_prompts
    from gtog.local.clients import local_chat_model

    prompts = load_prompts(prompts_dir)
    model = local_chat_model(info)
    rows = []
    started = time.monotonic()
    for case in cases:
        verdict = await judge(
            "correctness",
            model,
            prompts,
            {k: case[k] for k in ("question", "ground_truth", "predicted")},
        )
        rows.append(
            {
                "id": case["id"],
                "source": case["source"],
                "label": case["label"],
                "score": verdict.score,
                "error": verdict.error,
                "reason": verdict.reason,
            }
        )
        mark = "ok " if verdict.score == case["label"] else "BAD"
        print(f"  {mark} {case['id']:<16} label {case['label']} judge {verdict.score}", flush=True)
    wall = time.monotonic() - started

    def agree(subset: list[dict[str, Any]]) -> str:
        return f"{sum(r['score'] == r['label'] for r in subset)}/{len(subset)}"

    return {
        "prompts_dir": os.path.relpath(prompts_dir, REPO),
        "prompt_fingerprint": prompts.fingerprint,
        "correctness_prompt": prompts.templates["correctness"],
        "agreement": agree(rows),
        "agreement_by_source": {
            s: agree([r for r in rows if r["source"] == s])
            for s in sorted({r["source"] for r in rows})
        },
        "true_pos": sum(r["label"] == 1 and r["score"] == 1 for r in rows),
        "false_neg": sum(r["label"] == 1 and r["score"] == 0 for r in rows),
        "true_neg": sum(r["label"] == 0 and r["score"] == 0 for r in rows),
        "false_pos": sum(r["label"] == 0 and r["score"] == 1 for r in rows),
        "errors": sum(r["error"] is not None for r in rows),
        "always_0_baseline": agree([{**r, "score": 0} for r in rows]),
        "wall_seconds": round(wall, 1),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", action="append", type=Path, help="judge prompts dir")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from gtog.local import running_local_server

    cases = json.loads(CASES.read_text(encoding="utf-8"))["cases"]
    results = []
    with running_local_server() as info:
        for prompts_dir in args.prompts or [DEFAULT_PROMPTS]:
            print(f"{prompts_dir}: {len(cases)} cases", flush=True)
            result = asyncio.run(_score(prompts_dir.resolve(), cases, info))
            print(
                f"{prompts_dir}: agreement {result['agreement']} "
                f"{result['agreement_by_source']} in {result['wall_seconds']} s",
                flush=True,
            )
            results.append(result)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"cpu_count": os.cpu_count(), "results": results}, indent=1) + "\n",
        encoding="utf-8",
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

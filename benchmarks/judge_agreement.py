#!/usr/bin/env python
"""How often does the local model's correctness judge agree with a human label?

    python benchmarks/judge_agreement.py                                 # gtog/local/judge_prompts
    python benchmarks/judge_agreement.py --prompts gtog/eval/prompts     # the design's prompts
    python benchmarks/judge_agreement.py --prompts DIR --prompts DIR2    # compare prompt sets
    python benchmarks/judge_agreement.py --cases benchmarks/data/judge_cases_heldout.json

The default cases (benchmarks/data/judge_cases.json) are the ones the local prompt was
chosen on; the held-out cases were written afterwards and never used to tune it: their
agreement is the figure to quote. Results go to judge_agreement.json, or
judge_agreement_<suffix>.json for judge_cases_<suffix>.json.

Starts the local model server (the gtog[local] extra), judges the labelled cases in
benchmarks/data/judge_cases.json with `gtog.eval.run._judge_check` (the library behind
`gtog judge-check`: JSON mode, temperature 0, as `gtog eval` does), and writes accuracy,
Cohen's kappa with its 95% interval, the confusion matrix and the wall time per prompt
set to benchmarks/out/judge_agreement.json (with `--record`: benchmarks/results/).
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

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "benchmarks" / "data" / "judge_cases.json"
DEFAULT_PROMPTS = REPO / "gtog" / "local" / "judge_prompts"


async def _score(prompts_dir: Path, info: Any, cases_path: Path) -> dict[str, Any]:
    from gtog.eval.run._judge_check import agreement, judge_cases, load_cases
    from gtog.eval.scoring._judges import load_prompts
    from gtog.local._clients import local_chat_model

    cases = load_cases(cases_path)
    source = {c["id"]: c["source"] for c in json.loads(cases_path.read_text())["cases"]}
    prompts = load_prompts(prompts_dir)

    def show(case: Any, verdict: Any) -> None:
        mark = "ok " if verdict.score == case.label else "BAD"
        print(f"  {mark} {case.id:<16} label {case.label} judge {verdict.score}", flush=True)

    started = time.monotonic()
    verdicts = await judge_cases(
        cases, local_chat_model(info), prompts, concurrency=1, on_case=show
    )
    wall = time.monotonic() - started
    by_source = {}
    for s in sorted(set(source.values())):
        keep = [i for i, c in enumerate(cases) if source[c.id] == s]
        by_source[s] = agreement([cases[i] for i in keep], [verdicts[i] for i in keep])
    return {
        "prompts_dir": os.path.relpath(prompts_dir, REPO),
        "prompt_fingerprint": prompts.fingerprint,
        "correctness_prompt": prompts.templates["correctness"],
        "agreement": agreement(cases, verdicts)["correctness"],
        "agreement_by_source": {s: a["correctness"] for s, a in by_source.items()},
        "wall_seconds": round(wall, 1),
        "rows": [
            {
                "id": c.id,
                "source": source[c.id],
                "label": c.label,
                "score": v.score,
                "error": v.error,
                "reason": v.reason,
            }
            for c, v in zip(cases, verdicts, strict=True)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", action="append", type=Path, help="judge prompts dir")
    parser.add_argument("--cases", type=Path, default=CASES, help="labelled cases (JSON)")
    add_record_flag(parser)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from gtog.local import running_local_server

    results = []
    with running_local_server() as info:
        for prompts_dir in args.prompts or [DEFAULT_PROMPTS]:
            print(f"{prompts_dir}:", flush=True)
            result = asyncio.run(_score(prompts_dir.resolve(), info, args.cases.resolve()))
            a = result["agreement"]
            print(
                f"{prompts_dir}: accuracy {a['accuracy']} kappa {a['kappa']} {a['kappa_ci95']} "
                f"confusion {a['confusion']} in {result['wall_seconds']} s",
                flush=True,
            )
            results.append(result)
    suffix = args.cases.stem.removeprefix("judge_cases")
    data = {
        "cases": os.path.relpath(args.cases.resolve(), REPO),
        "cpu_count": os.cpu_count(),
        "results": results,
    }
    path = write_results(f"judge_agreement{suffix}.json", data, args.record)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

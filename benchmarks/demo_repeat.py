#!/usr/bin/env python
"""Does the offline demo repeat exactly? Compare two `demo_local.py` results files.

    python benchmarks/demo_local.py && cp benchmarks/out/demo_local.json /tmp/run1.json
    python benchmarks/demo_local.py && cp benchmarks/out/demo_local.json /tmp/run2.json
    python benchmarks/demo_repeat.py /tmp/run1.json /tmp/run2.json [--record]

Counts the (question, method) answers and verdicts that are identical in both runs and
compares the local server's request and token counts and the wall times. Writes
benchmarks/out/demo_repeat.json (with `--record`: benchmarks/results/).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from recording import add_record_flag, write_results


def _answers(run: dict[str, Any]) -> dict[str, tuple[Any, str]]:
    return {
        f"{item['question_id']}/{method}": (
            entry.get("answer"),
            json.dumps(entry.get("scores"), sort_keys=True),
        )
        for item in run["answers"]
        for method, entry in item["methods"].items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs=2, type=Path, help="two demo_local.json files")
    add_record_flag(parser)
    args = parser.parse_args(argv)
    runs = [json.loads(p.read_text()) for p in args.runs]
    first, second = (_answers(r) for r in runs)
    differ = sorted(k for k in first if first[k] != second.get(k))
    counts = [  # the server's request and token counts (its seconds vary)
        {k: v for k, v in r["server_requests"].items() if "seconds" not in k} for r in runs
    ]
    result = {
        "command": runs[0]["command"],
        "answers": len(first),
        "identical_answers_and_verdicts": len(first) - len(differ),
        "different": differ,
        "server_requests": [r["server_requests"] for r in runs],
        "same_requests_and_tokens": counts[0] == counts[1],
        "wall_seconds": [r["wall_seconds"] for r in runs],
        "scores": [
            {
                m: {k: s.get(k) for k in ("correctness", "token_recall")}
                for m, s in r["summary"]["by_method"].items()
            }
            for r in runs
        ],
    }
    path = write_results("demo_repeat.json", result, args.record)
    print(
        f"{result['identical_answers_and_verdicts']} of {result['answers']} answers and verdicts "
        f"identical; requests and tokens the same: {result['same_requests_and_tokens']}; "
        f"wall {result['wall_seconds']} s; wrote {path}"
    )
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())

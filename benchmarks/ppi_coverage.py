"""Does the prediction-powered interval cover the true mean when the judge is biased?

A run of two methods, N answers each; the truth is each answer's right/wrong. The judge is
exact on method `fair` and lenient on `lenient`: it marks 20% of `lenient`'s wrong answers
right. Each simulated study draws the answers' truths, the judge's verdicts, and a random
sample of 50 labelled answers per method (people label without error); it computes, with
gtog's own functions, the judge-only mean's 95% interval (Wilson, what gtog prints without
labels) and the PPI mean's 95% interval, and asks whether each covers the method's true
mean (the share of its N answers that are right). Also the paired difference.

    python benchmarks/ppi_coverage.py [--record] [--sims 1000]

Writes benchmarks/out/ppi_coverage.json (with `--record`: benchmarks/results/).
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from recording import add_record_flag, write_results

from gtog.eval.results._calibration import ppi_difference, ppi_mean
from gtog.eval.results._statistics import wilson_interval


def simulate(
    sims: int, answers: int, labels: int, accuracy: float, lenient: float, seed: int
) -> dict:
    rng = np.random.default_rng(seed)
    covered = {"fair": [0, 0], "lenient": [0, 0]}  # [judge-only, ppi]
    widths = {"fair": [], "lenient": []}
    diff_covered = 0
    for _ in range(sims):
        rects, judged, truths = {}, {}, {}
        for method in ("fair", "lenient"):
            truth = (rng.random(answers) < accuracy).astype(float)
            judge = truth.copy()
            if method == "lenient":
                judge[(truth == 0) & (rng.random(answers) < lenient)] = 1.0
            idx = rng.choice(answers, labels, replace=False)
            true_mean = truth.mean()
            ci = wilson_interval(int(judge.sum()), answers)
            covered[method][0] += ci.low <= true_mean <= ci.high
            _, (low, high), _ = ppi_mean(truth[idx], judge[idx], judge)
            covered[method][1] += low <= true_mean <= high
            widths[method].append(high - low)
            rects[method], judged[method], truths[method] = truth[idx] - judge[idx], judge, truth
        _, (low, high), _ = ppi_difference(
            judged["fair"] - judged["lenient"], rects["fair"], rects["lenient"]
        )
        diff_covered += low <= truths["fair"].mean() - truths["lenient"].mean() <= high
    return {
        "judge_only_coverage": {m: c[0] / sims for m, c in covered.items()},
        "ppi_coverage": {m: c[1] / sims for m, c in covered.items()},
        "ppi_mean_width": {m: float(np.mean(w)) for m, w in widths.items()},
        "ppi_difference_coverage": diff_covered / sims,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=1000)
    add_record_flag(parser)
    args = parser.parse_args()
    setup = {
        "sims": args.sims,
        "answers": 400,
        "labels": 50,
        "accuracy": 0.6,
        "lenient": 0.2,
        "seed": 11,
    }
    result = {"setup": setup, **simulate(**setup)}
    path = write_results("ppi_coverage.json", result, args.record)
    print(json.dumps(result, indent=2))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python
"""How often the routing headroom's 95% interval holds the true headroom, and a fixed
router's regret interval the true regret, on simulated runs with a known truth.

    python benchmarks/routing_coverage.py            # a few minutes on 2 cores
    python benchmarks/routing_coverage.py --record   # write benchmarks/results/

A run: k clusters (indexes) of m questions, half of one type and half of the other; three
methods right with a probability per type, shifted per cluster on the logit scale (a
cluster effect of sd `s`: questions of one index succeed or fail together); each method's
answer drawn independently given the question. The truth, by a large Monte Carlo draw of
(type, cluster effect): the oracle's expected score E[max_m Y_m], the best single method's
max_m E[Y_m], their difference (the headroom), and a router that sends type A to method 0
and type B to method 1: its regret E[max_m Y_m] - E[Y_route]. Each simulated run computes
the headroom as `gtog.eval.results._routing` does (the best single method chosen on the
run's own means, then `inference.compare` of the oracle's and its scores, clustered by
index) and the router's regret the same way. Coverage is the share of runs whose interval
holds the truth (each with a standard error of about 0.007 at 1,000 runs).

The oracle and the best single method are both chosen on the data: where the methods are
alike ("close"), choosing the best single method on its own noisy mean lifts it and lowers
the headroom, so the interval is checked there too.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from recording import add_record_flag, write_results
from scipy.special import expit, logit

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gtog.eval.results._inference import compare  # noqa: E402

REPS = 1000
SCENARIOS = {
    # method -> (P(right) on type A, on type B)
    "split": ((0.9, 0.2), (0.2, 0.9), (0.5, 0.5)),
    "close": ((0.6, 0.55), (0.55, 0.6), (0.5, 0.5)),
    "one best": ((0.8, 0.8), (0.6, 0.4), (0.4, 0.6)),
}
CLUSTERS = (6, 12, 24)
SIZE = 10
SPREADS = (0.0, 0.8)


def truth(p: np.ndarray, s: float, rng: np.random.Generator, n: int = 400_000) -> dict:
    """The true oracle, best single, headroom and the router's regret (see the module)."""
    kinds = rng.integers(0, 2, n)
    u = rng.normal(0.0, s, n) if s > 0 else np.zeros(n)
    prob = expit(logit(p[:, kinds]) + u)  # methods x draws
    oracle = float(np.mean(1 - np.prod(1 - prob, axis=0)))
    means = prob.mean(axis=1)
    routed = np.where(kinds == 0, prob[0], prob[1]).mean()
    return {
        "oracle": oracle,
        "best_single": float(means.max()),
        "headroom": oracle - float(means.max()),
        "regret": oracle - float(routed),
    }


def one_run(p: np.ndarray, k: int, s: float, rng: np.random.Generator) -> tuple:
    n = k * SIZE
    labels = np.repeat(np.arange(k), SIZE)
    kinds = np.tile(np.arange(SIZE) % 2, k)
    u = rng.normal(0.0, s, k)[labels] if s > 0 else np.zeros(n)
    y = (rng.random((p.shape[0], n)) < expit(logit(p[:, kinds]) + u)).astype(float)
    oracle = y.max(axis=0)
    best = int(np.argmax(y.mean(axis=1)))  # ties: the first, as _best_single
    head = compare(oracle, y[best], list(labels), binary=True)
    routed = np.where(kinds == 0, y[0], y[1])
    regret = compare(oracle, routed, list(labels), binary=True)
    return head, regret


def covered(entry: dict, value: float) -> bool:
    ci = entry.get("ci95")
    return ci is not None and ci[0] - 1e-12 <= value <= ci[1] + 1e-12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=REPS)
    add_record_flag(parser)
    args = parser.parse_args()
    rng = np.random.default_rng(20261127)
    rows = []
    start = time.perf_counter()
    for name, probs in SCENARIOS.items():
        p = np.array(probs, dtype=float)
        for s in SPREADS:
            true = truth(p, s, rng)
            for k in CLUSTERS:
                hits_h = hits_r = 0
                widths = []
                estimates = []
                for _ in range(args.reps):
                    head, regret = one_run(p, k, s, rng)
                    hits_h += covered(head, true["headroom"])
                    hits_r += covered(regret, true["regret"])
                    if head.get("ci95"):
                        widths.append(head["ci95"][1] - head["ci95"][0])
                    estimates.append(head["diff"])
                row = {
                    "scenario": name,
                    "cluster_sd": s,
                    "clusters": k,
                    "questions": k * SIZE,
                    "true_headroom": round(true["headroom"], 4),
                    "mean_estimate": round(float(np.mean(estimates)), 4),
                    "headroom_coverage": round(hits_h / args.reps, 3),
                    "regret_coverage": round(hits_r / args.reps, 3),
                    "mean_width": round(float(np.mean(widths)), 3) if widths else None,
                }
                rows.append(row)
                print(
                    f"{name:9} sd {s:.1f} k {k:2}: headroom {true['headroom']:.3f} "
                    f"(est {row['mean_estimate']:.3f}) covered {row['headroom_coverage']:.3f}, "
                    f"regret covered {row['regret_coverage']:.3f}, width {row['mean_width']}",
                    flush=True,
                )
    out = {
        "reps": args.reps,
        "size": SIZE,
        "seconds": round(time.perf_counter() - start, 1),
        "lowest_headroom_coverage": min(r["headroom_coverage"] for r in rows),
        "lowest_regret_coverage": min(r["regret_coverage"] for r in rows),
        "rows": rows,
    }
    path = write_results("routing_coverage.json", out, args.record)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""How often gtog's 95% intervals hold the true value: win rates and fractional means.

    python benchmarks/interval_coverage.py            # about 5 minutes on 2 cores
    python benchmarks/interval_coverage.py --record   # write benchmarks/results/

Win rates (a tie counts half): the exact coverage of `win_rate_interval` (Clopper-Pearson
at wins + ties / 2 of n) at n = 10, 20, 50 and 200, for every tie rate 0, 0.1, ..., 1 and
every win rate in steps of 0.01 — each record's probability summed, no sampling noise —
beside the interval gtog used before (Wilson without ties, else a BCa bootstrap of the
1 / 0.5 / 0 scores), at n = 10 and 20.

Means of fractional scores: seeded simulation over `tests.support.coverage`'s family of
score shapes (beta curves, up to 70% of the scores at 0 or at 1, a few discrete levels).
First the rule: the coverage of the skewness-corrected t bounds (and of Student's t, for
comparison) at each n from 5 to 200, and the smallest n from which every shape is covered
at least 93% of the time, by more than two standard errors of the simulation —
`MIN_FRACTIONAL_N`. Then what `mean_interval` gives at n = 10,
20, 50 and 200, per shape, and on three shapes with heavier ends than the family.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from recording import add_record_flag, write_results
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gtog.eval.results._statistics import (  # noqa: E402
    MIN_FRACTIONAL_N,
    Interval,
    sample_moments,
    skew_t_bounds,
    wilson_interval,
)
from tests.support.coverage import (  # noqa: E402
    BEYOND,
    SCORE_DISTRIBUTIONS,
    each_sample,
    mean_coverage,
    rate_grid,
    win_rate_coverage,
)

TARGET = 0.93
RATE_NS = (10, 20, 50, 200)
TIE_RATES = [round(0.1 * i, 1) for i in range(11)]
RULE_NS = (5, 6, 7, 8, 9, 10, 12, 15, 20, 30, 50, 100, 200)
RULE_REPS = 20_000
MEAN_NS = (10, 20, 50, 200)
MEAN_REPS = 4_000


def before_issue_31(wins: int, ties: int, n: int) -> Interval:
    """The win-rate interval gtog used before: Wilson without ties, else a seeded BCa
    bootstrap (9,999 resamples; none when every score is the same)."""
    if ties == 0:
        return wilson_interval(wins, n)
    x = np.array([1.0] * wins + [0.5] * ties + [0.0] * (n - wins - ties))
    if np.all(x == x[0]):
        return Interval.none("no spread")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ci = stats.bootstrap(
            (x,), np.mean, n_resamples=9999, method="BCa", rng=np.random.default_rng(20240613)
        ).confidence_interval
    return Interval(float(ci.low), float(ci.high), "bootstrap_bca")


def _summary(coverage: list[tuple[float, float, float]]) -> dict[str, Any]:
    worst = min(coverage)
    ties = [c for c, _, pt in coverage if pt >= 0.5]
    some_decisive = [c for c, _, pt in coverage if pt < 1]
    return {
        "min": round(worst[0], 4),
        "min_at": {"p_win": worst[1], "p_tie": worst[2]},
        "mean": round(float(np.mean([c for c, _, _ in coverage])), 4),
        "min_tie_rate_at_least_half": round(min(ties), 4),
        "min_tie_rate_below_1": round(min(some_decisive), 4),
        "points": len(coverage),
    }


def win_rates() -> dict[str, Any]:
    grid = rate_grid(0.01, TIE_RATES)
    out: dict[str, Any] = {"grid": {"tie_rates": TIE_RATES, "win_rate_step": 0.01}}
    for n in RATE_NS:
        start = time.perf_counter()
        out[str(n)] = _summary(win_rate_coverage(n, grid))
        print(f"win rate n={n}: {out[str(n)]} ({time.perf_counter() - start:.0f} s)", flush=True)
    coarse = rate_grid(0.05, TIE_RATES)
    out["before_issue_31"] = {"grid": {"tie_rates": TIE_RATES, "win_rate_step": 0.05}}
    for n in (10, 20):
        out["before_issue_31"][str(n)] = _summary(win_rate_coverage(n, coarse, before_issue_31))
        print(f"before, n={n}: {out['before_issue_31'][str(n)]}", flush=True)
    return out


def _raw_coverage(n: int) -> tuple[float, str, float, str]:
    """Lowest coverage over the family of the skew-t bounds and of Student's t at n."""
    worst_skew: tuple[float, str] = (1.0, "")
    worst_t: tuple[float, str] = (1.0, "")
    q = float(stats.t.ppf(0.975, n - 1))
    for dist in SCORE_DISTRIBUTIONS:
        x = np.array(list(each_sample(dist, n, RULE_REPS, seed=7)))
        mean, sd, skew = sample_moments(x)
        low, high = skew_t_bounds(mean, sd, skew, n)
        spread = sd > 0
        held = np.mean(spread & (low <= dist.mean) & (dist.mean <= high))
        half = q * sd / np.sqrt(n)
        held_t = np.mean(spread & (mean - half <= dist.mean) & (dist.mean <= mean + half))
        worst_skew = min(worst_skew, (float(held), dist.name))
        worst_t = min(worst_t, (float(held_t), dist.name))
    return worst_skew[0], worst_skew[1], worst_t[0], worst_t[1]


def fractional_rule() -> dict[str, Any]:
    rows = {}
    for n in RULE_NS:
        skew, skew_at, plain, plain_at = _raw_coverage(n)
        rows[str(n)] = {
            "skew_t_min": round(skew, 4),
            "skew_t_min_at": skew_at,
            "student_t_min": round(plain, 4),
            "student_t_min_at": plain_at,
        }
        print(f"rule n={n}: {rows[str(n)]}", flush=True)
    margin = 2 * float(np.sqrt(TARGET * (1 - TARGET) / RULE_REPS))
    smallest = None
    for n in reversed(RULE_NS):
        if rows[str(n)]["skew_t_min"] < TARGET + margin:
            break
        smallest = n
    if smallest != MIN_FRACTIONAL_N:
        print(f"WARNING: the simulation says {smallest}, MIN_FRACTIONAL_N is {MIN_FRACTIONAL_N}")
    return {
        "reps": RULE_REPS,
        "margin": round(margin, 4),
        "by_n": rows,
        "smallest_n_at_target": smallest,
        "min_fractional_n": MIN_FRACTIONAL_N,
    }


def fractional_means() -> dict[str, Any]:
    out: dict[str, Any] = {"reps": MEAN_REPS}
    for n in MEAN_NS:
        family = {d.name: mean_coverage(d, n, MEAN_REPS) for d in SCORE_DISTRIBUTIONS}
        beyond = {d.name: mean_coverage(d, n, MEAN_REPS) for d in BEYOND}
        worst = min(family.items(), key=lambda kv: kv[1][0])
        out[str(n)] = {
            "min": round(worst[1][0], 4),
            "min_at": worst[0],
            "mean": round(float(np.mean([c for c, _ in family.values()])), 4),
            "no_interval_max": round(max(m for _, m in family.values()), 4),
            "family": {k: round(c, 4) for k, (c, _) in family.items()},
            "beyond_family": {k: round(c, 4) for k, (c, _) in beyond.items()},
        }
        print(f"mean_interval n={n}: min {out[str(n)]['min']} ({worst[0]})", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    start = time.perf_counter()
    results = {
        "command": "python benchmarks/interval_coverage.py",
        "target": TARGET,
        "win_rate": win_rates(),
        "fractional_rule": fractional_rule(),
        "fractional_mean": fractional_means(),
        "family": [d.name for d in SCORE_DISTRIBUTIONS],
        "beyond_family": [d.name for d in BEYOND],
    }
    results["wall_seconds"] = round(time.perf_counter() - start)
    path = write_results("interval_coverage.json", results, args.record)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Does a true difference of the reported `mde` get detected 80% of the time by the test
the summary runs, after the Holm adjustment its table applies?

    python benchmarks/power.py            # about 20 minutes on a busy 2-core machine
    python benchmarks/power.py --record   # write benchmarks/results/power.json

For each case (0/1 or fractional scores; 6 to 30 clusters, or independent questions; 40
to 400 questions; a Holm family of 1 or 10 tests) the mde is computed as the summary does
(`gtog.eval.results._power.detectable_for`) from the case's true discordance or standard
deviation and intra-cluster correlation; then seeded studies are drawn with that true
difference, each tested by the summary's own test (`cluster_sign_flip` from 6 clusters
on, else the exact McNemar test for 0/1 scores and the paired permutation test for
fractional ones, the very functions `compare` calls) together with the other N - 1 tests
of the family (true nulls: uniform p-values), Holm-adjusted, and the share of studies in
which the difference is found is the achieved power (600 studies: standard error
about 0.016; the cases run in 2 processes).

The data come from the model the mde assumes (0/1 differences: a normal cluster effect on
the difference, clipped to the discordance, each question a gain or a loss with the
resulting probabilities; fractional ones: normal cluster and question effects): this
checks the computation (the test, its exact or sampled sign patterns, the Holm bar, the
simulation and its search for the 80% point), not how well the model fits a study. Cases
where the test cannot reach p < 0.05 / N at all (6 to 8 clusters under Holm over 10
tests), or not with 80% power (0/1 scores in 6 clusters of 7), are listed with no mde and
the summary's reason.

The table is on docs/statistics.md ("How small a difference can this study see?").
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from recording import add_record_flag, write_results
from scipy import stats

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gtog.eval.results._clustered import MIN_CLUSTERS, cluster_sign_flip  # noqa: E402
from gtog.eval.results._power import detectable_for  # noqa: E402
from gtog.eval.results._statistics import N_RESAMPLES, SEED, _mean_diff, holm  # noqa: E402

STUDIES = 600
DISCORDANCE = 0.4
SD = 0.3
ICC = 0.05
BAND = (0.78, 0.85)

CLUSTERED = [(6, 7), (7, 50), (8, 10), (10, 40), (12, 5), (20, 20), (30, 2)]
"""(clusters, questions per cluster): 42 to 400 questions."""
INDEPENDENT = [40, 120]
FAMILIES = [1, 10]


def _differences(
    rng: np.random.Generator, k: int, m: int, delta: float, binary: bool, icc: float
) -> np.ndarray:
    """One study's paired differences (a - b), cluster by cluster (k clusters of m)."""
    if binary:
        tau = np.sqrt(icc * (DISCORDANCE - delta**2))  # icc of the differences at delta
        shift = np.clip(delta + tau * rng.standard_normal(k), -DISCORDANCE, DISCORDANCE)
        up = np.repeat((DISCORDANCE + shift) / 2, m)
        u = rng.random(k * m)
        return np.where(u < up, 1.0, np.where(u < DISCORDANCE, -1.0, 0.0))
    cluster = np.sqrt(icc) * SD * rng.standard_normal(k)
    noise = np.sqrt(1 - icc) * SD * rng.standard_normal(k * m)
    return delta + np.repeat(cluster, m) + noise


def _p_value(d: np.ndarray, codes: np.ndarray | None, k: int, binary: bool) -> float:
    """The summary's test (`inference.compare` / `statistics.paired_comparison`)."""
    if codes is not None:
        return cluster_sign_flip(d, codes, k)
    if binary:
        only_a, only_b = int(np.sum(d > 0)), int(np.sum(d < 0))
        n = only_a + only_b
        return 1.0 if n == 0 else float(stats.binomtest(only_a, n, 0.5).pvalue)
    res = stats.permutation_test(
        (d, np.zeros_like(d)),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=N_RESAMPLES,
        rng=np.random.default_rng(SEED),
    )
    return float(res.pvalue)


def case(k: int, m: int, binary: bool, tests: int, clustered: bool) -> dict[str, Any]:
    """The reported mde of one case and the power the summary's test achieves at it."""
    n = k * m
    icc = ICC if clustered else 0.0
    sizes = (m,) * k if clustered else None
    spread = DISCORDANCE if binary else SD
    found = detectable_for(n, sizes, binary=binary, spread=spread, icc=icc, tests=tests)
    out: dict[str, Any] = {
        "scores": "0/1" if binary else "fractional",
        "clusters": k if clustered else None,
        "questions": n,
        "icc": icc,
        "holm_tests": tests,
        "mde": found.mde,
        "reason": found.reason,
    }
    if found.mde is None:
        return out
    rng = np.random.default_rng([SEED, k, m, int(binary), tests, int(clustered)])
    codes = np.repeat(np.arange(k), m) if clustered else None
    hits = 0
    for _ in range(STUDIES):
        d = _differences(rng, k, m, found.mde, binary, icc)
        p = _p_value(d, codes, k, binary)
        family = [p, *rng.random(tests - 1)]
        adjusted = holm(family)[0]
        hits += adjusted is not None and adjusted < 0.05
    power = hits / STUDIES
    out.update(
        achieved_power=round(power, 4),
        se=round(float(np.sqrt(power * (1 - power) / STUDIES)), 4),
        in_band=BAND[0] <= power <= BAND[1],
    )
    return out


def _case(args: tuple[int, int, bool, int, bool]) -> dict[str, Any]:
    k, m, binary, tests, clustered = args
    return case(k, m, binary, tests, clustered)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    start = time.perf_counter()
    cases = [
        (k, m, binary, tests, clustered)
        for binary in (True, False)
        for tests in FAMILIES
        for (k, m, clustered) in [
            *((k, m, True) for k, m in CLUSTERED),
            *((n, 1, False) for n in INDEPENDENT),
        ]
    ]
    assert all(k >= MIN_CLUSTERS for k, _, _, _, clustered in cases if clustered)
    with multiprocessing.Pool(2) as pool:
        rows = []
        for row in pool.imap(_case, cases):
            rows.append(row)
            print(row, flush=True)
    powers = [r["achieved_power"] for r in rows if "achieved_power" in r]
    results = {
        "command": "python benchmarks/power.py",
        "studies_per_case": STUDIES,
        "band": list(BAND),
        "discordance": DISCORDANCE,
        "sd": SD,
        "icc": ICC,
        "cases": rows,
        "achieved_power": {"min": min(powers), "max": max(powers)},
        "all_in_band": all(r.get("in_band", True) for r in rows),
        "wall_seconds": round(time.perf_counter() - start),
    }
    path = write_results("power.json", results, args.record)
    print(f"wrote {path}: achieved power {min(powers):.3f}-{max(powers):.3f}")


if __name__ == "__main__":
    main()

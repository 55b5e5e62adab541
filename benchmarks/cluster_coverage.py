#!/usr/bin/env python
"""How often gtog's clustered 95% intervals hold the true value when questions come in
clusters with a known intra-cluster correlation (ICC), beside the naive intervals; and how
often its paired tests cry wolf.

    python benchmarks/cluster_coverage.py            # about 25 minutes on 2 cores
    python benchmarks/cluster_coverage.py --record   # write benchmarks/results/

Seeded simulation (`tests.support.cluster_coverage`): 0/1 and fractional means, paired
differences of 0/1 and fractional scores, in 5 to 40 clusters of 5, 20 or 1-39 questions,
at ICC 0, 0.05, 0.1, 0.2 and 0.3 and means from 0.5 to 0.9 (the family); and beyond it
(ICC 0.5; 0/1 means of 0.95). For each number of clusters, the lowest coverage over the
family, naive and clustered; `MIN_CLUSTERS` is the smallest number of clusters from which
every case of the family is covered at least 93% of the time (each case's coverage has a
standard error of about 0.005, and the lowest of 45 to 90 cases sits below its true value:
the rule is strict). Then the false alarms (p < 0.05 when the methods do not differ)
of McNemar's test and of the cluster sign-flip test.

The table is on docs/statistics.md ("Questions come in clusters").
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gtog.eval.results._clustered import MIN_CLUSTERS  # noqa: E402
from tests.support.cluster_coverage import Scenario, coverage, false_alarms  # noqa: E402

TARGET = 0.93
REPS = 3000
CLUSTERS = (5, 6, 8, 12, 20, 40)
SIZES = (5, 20, 0)
ICCS = (0.0, 0.05, 0.1, 0.2, 0.3)
KINDS = ("mean01", "mean", "diff01", "diff")


def scenarios(kind: str, k: int, size: int, icc: float) -> list[Scenario]:
    if kind == "mean01":
        return [Scenario(kind, k, size, icc, m) for m in (0.5, 0.7, 0.9)]
    if kind == "mean":
        return [Scenario(kind, k, size, icc, m, kappa=kp) for m in (0.5, 0.7, 0.9) for kp in (1, 4)]
    pairs = ((0.5, 0.5), (0.7, 0.5), (0.9, 0.7))
    return [Scenario(kind, k, size, icc, a, other=b, shared=0.5) for a, b in pairs]


def beyond(kind: str, k: int, size: int) -> list[Scenario]:
    out = [s for s in scenarios(kind, k, size, 0.5)]
    if kind == "mean01":
        out += [Scenario(kind, k, size, icc, 0.95) for icc in ICCS]
    return out


def _lowest(rows: list[tuple[Scenario, float, float]], which: int) -> dict[str, Any]:
    worst = min(rows, key=lambda r: r[which])
    return {"coverage": round(worst[which], 4), "at": worst[0].label}


def coverage_table() -> dict[str, Any]:
    out: dict[str, Any] = {"reps": REPS, "kinds": {}}
    error = float(np.sqrt(TARGET * (1 - TARGET) / REPS))
    ok_from: dict[str, int | None] = {}
    for kind in KINDS:
        by_k: dict[str, Any] = {}
        for k in CLUSTERS:
            start = time.perf_counter()
            family = [
                (sc, *coverage(sc, REPS))
                for size, icc in itertools.product(SIZES, ICCS)
                for sc in scenarios(kind, k, size, icc)
            ]
            extra = [(sc, *coverage(sc, REPS)) for size in SIZES for sc in beyond(kind, k, size)]
            by_icc = {
                f"{icc:g}": {
                    "naive": _lowest([r for r in family if r[0].icc == icc], 1),
                    "clustered": _lowest([r for r in family if r[0].icc == icc], 2),
                }
                for icc in ICCS
            }
            by_k[str(k)] = {
                "naive": _lowest(family, 1),
                "clustered": _lowest(family, 2),
                "by_icc": by_icc,
                "beyond_family": {"naive": _lowest(extra, 1), "clustered": _lowest(extra, 2)},
                "cases": len(family),
            }
            print(
                f"{kind} k={k}: naive {by_k[str(k)]['naive']['coverage']:.3f}, clustered "
                f"{by_k[str(k)]['clustered']['coverage']:.3f} ({by_k[str(k)]['clustered']['at']}); "
                f"beyond {by_k[str(k)]['beyond_family']['clustered']['coverage']:.3f} "
                f"({time.perf_counter() - start:.0f} s)",
                flush=True,
            )
        smallest = None
        for k in reversed(CLUSTERS):
            if by_k[str(k)]["clustered"]["coverage"] < TARGET:
                break
            smallest = k
        ok_from[kind] = smallest
        out["kinds"][kind] = by_k
    needed = max((v for v in ok_from.values() if v is not None), default=None)
    if any(v is None for v in ok_from.values()):
        needed = None
    out["standard_error"] = round(error, 4)
    out["smallest_clusters_at_target"] = {"by_kind": ok_from, "all": needed}
    out["min_clusters"] = MIN_CLUSTERS
    if needed != MIN_CLUSTERS:
        print(f"WARNING: the simulation says {needed}, MIN_CLUSTERS is {MIN_CLUSTERS}")
    return out


def alarms() -> dict[str, Any]:
    reps = 500
    out: dict[str, Any] = {"reps": reps, "cases": {}}
    for k, size, icc, mean in itertools.product((6, 10, 20), (5, 0), (0.1, 0.3), (0.5, 0.9)):
        sc = Scenario("diff01", k, size, icc, mean, other=mean, shared=0.5)
        naive, clustered = false_alarms(sc, reps)
        out["cases"][sc.label] = {"mcnemar": naive, "cluster_sign_flip": clustered}
        print(f"false alarms {sc.label}: McNemar {naive:.3f}, sign flip {clustered:.3f}")
    cases = out["cases"].values()
    out["max"] = {
        "mcnemar": max(c["mcnemar"] for c in cases),
        "cluster_sign_flip": max(c["cluster_sign_flip"] for c in cases),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    start = time.perf_counter()
    results = {
        "command": "python benchmarks/cluster_coverage.py",
        "target": TARGET,
        "coverage": coverage_table(),
        "false_alarms": alarms(),
    }
    results["wall_seconds"] = round(time.perf_counter() - start)
    path = write_results("cluster_coverage.json", results, args.record)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

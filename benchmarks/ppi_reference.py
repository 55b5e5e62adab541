"""Reference figures from ppi-python for gtog's prediction-powered mean (tests compare).

ppi-python pulls numba, scikit-learn and a downloader, so it is not a dependency of gtog or
its tests: run this once in a venv of its own (`pip install ppi-python`) and it writes
tests/fixtures/ppi_reference.json, which tests/unit/eval/test_calibration.py checks
`gtog.eval.results._calibration.ppi_mean` against (lambda 1: classic PPI, 95%).

    /path/to/ppi-venv/bin/python benchmarks/ppi_reference.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from ppi_py import ppi_mean_ci, ppi_mean_pointestimate

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "ppi_reference.json"


def main() -> None:
    rng = np.random.default_rng(7)
    cases = []
    for n, big_n in ((12, 40), (50, 400)):
        truth = (rng.random(big_n) < 0.6).astype(float)
        judge = truth.copy()
        judge[(truth == 0) & (rng.random(big_n) < 0.3)] = 1  # a lenient judge
        idx = rng.choice(big_n, n, replace=False)
        y, yhat = truth[idx], judge[idx]
        low, high = ppi_mean_ci(y, yhat, judge, alpha=0.05, lam=1)
        point = ppi_mean_pointestimate(y, yhat, judge, lam=1)
        cases.append(
            {
                "Y": y.astype(int).tolist(),
                "Yhat": yhat.astype(int).tolist(),
                "all": judge.astype(int).tolist(),
                "mean": float(np.ravel(point)[0]),
                "ci": [float(np.ravel(low)[0]), float(np.ravel(high)[0])],
            }
        )
    OUT.write_text(json.dumps(cases) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()

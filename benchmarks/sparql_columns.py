"""SPARQL column matching: gtog's pruned matcher vs graphrag-eval's permutations.

Each case is a 1,000-row actual result with `n_act` columns of integers 0..99 (so
every column holds the same *set* of values and single-column signatures prune
nothing under the default set semantics), and a reference made of `n_ref` of those
columns in shuffled order with shuffled rows. "match" is that reference; "no match"
changes one reference cell, which forces the brute force through every permutation.
Brute force stops at the time budget and is reported as "> budget".

    python benchmarks/sparql_columns.py [--budget 5] [--rows 1000]

Writes benchmarks/out/sparql_columns.json (with `--record`: benchmarks/results/) and prints
a markdown table.
"""

from __future__ import annotations

import argparse
import math
import platform
import random
import time
from typing import Any

from recording import add_record_flag, write_results

from gtog.qa._sparql import BudgetExceeded, Table, match_columns, match_columns_bruteforce

RESULTS = "sparql_columns.json"
CASES = [(m, n) for m in (3, 4, 5, 6) for n in (6, 8, 10)]


def make_case(n_ref: int, n_act: int, rows: int, seed: int) -> tuple[Table, Table, Table]:
    """Actual table, matching reference and non-matching reference."""
    rng = random.Random(seed)
    actual: Table = [
        tuple(("num", float(rng.randrange(100))) for _ in range(n_act)) for _ in range(rows)
    ]
    columns = rng.sample(range(n_act), n_ref)
    reference: Table = [tuple(row[c] for c in columns) for row in actual]
    rng.shuffle(reference)
    broken = list(reference)
    broken[0] = (("num", -1.0), *broken[0][1:])
    return actual, reference, broken


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def run(budget: float, rows: int) -> list[dict[str, Any]]:
    """Time both matchers on every case."""
    records = []
    for n_ref, n_act in CASES:
        actual, reference, broken = make_case(n_ref, n_act, rows, seed=n_ref * 100 + n_act)
        for label, ref in (("match", reference), ("no match", broken)):
            fast_sec, fast = timed(match_columns, ref, actual, "set")
            try:
                slow_sec, slow = timed(match_columns_bruteforce, ref, actual, "set", budget)
                slow_found: bool | None = slow is not None
            except BudgetExceeded:
                slow_sec, slow_found = None, None
            records.append(
                {
                    "n_ref": n_ref,
                    "n_act": n_act,
                    "rows": rows,
                    "case": label,
                    "permutations": math.perm(n_act, n_ref),
                    "pruned_sec": fast_sec,
                    "pruned_found": fast is not None,
                    "bruteforce_sec": slow_sec,
                    "bruteforce_found": slow_found,
                }
            )
            print(".", end="", flush=True)
    print()
    return records


def table(records: list[dict[str, Any]], budget: float) -> str:
    """Markdown table of the records."""
    lines = [
        "| ref cols | actual cols | case | permutations | gtog pruned | brute force |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    for r in records:
        slow = (
            f"{r['bruteforce_sec']:.3f} s" if r["bruteforce_sec"] is not None else f"> {budget:g} s"
        )
        lines.append(
            f"| {r['n_ref']} | {r['n_act']} | {r['case']} | {r['permutations']:,} | "
            f"{r['pruned_sec'] * 1000:.1f} ms | {slow} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark, save JSON, print markdown."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=float, default=5.0, help="brute-force seconds per case")
    parser.add_argument("--rows", type=int, default=1000)
    add_record_flag(parser)
    args = parser.parse_args()
    records = run(args.budget, args.rows)
    for r in records:
        assert r["pruned_found"] == (r["case"] == "match"), r
    payload = {
        "budget_sec": args.budget,
        "machine": f"{platform.machine()}, python {platform.python_version()}",
        "records": records,
    }
    written = write_results(RESULTS, payload, args.record)
    print(table(records, args.budget))
    print(f"wrote {written}")


if __name__ == "__main__":
    main()

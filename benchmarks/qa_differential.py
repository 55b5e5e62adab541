"""Differential test of gtog.qa against graphrag-eval 6.6.1, and a per-call benchmark.

graphrag-eval runs in a throwaway venv (never a dependency of gtog; Python 3.12, which
it requires) through `benchmarks/ge6_worker.py`; gtog runs here. For each category
(steps, compare, sparql, retrieval, records, aggregates) seeded random cases
(`benchmarks/qa_cases.py`) go through both, and gtog's outcome in each mode is
compared strictly with graphrag-eval's (types too; `tests/support/qa_parity.py`).
Cases graphrag-eval raises on are counted apart ("raised": gtog raises too, or for
records gives exactly the raising questions an error record).

    python benchmarks/qa_differential.py [--cases 1000] [--upstream PATH] [--time]
        [--write-fixture 60] [--readme] [--venv /tmp/gtog-ge6-venv] [--python python3.12]

`--upstream`: a graphrag-eval checkout (or git directory); every public call its own
test suite makes is replayed as a case too. `--time`: per-call time of run_evaluation
on the same batches. `--write-fixture N`: N cases per category with graphrag-eval's
outcomes into tests/fixtures/qa/ge6_parity.json.gz (replayed by the parity test in
CI). `--readme`: rewrites the README's tables between the qa-differential markers.
Writes benchmarks/results/qa_differential.json and prints the tables.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).parent))

from qa_cases import make_case  # noqa: E402
from qa_witnesses import readme_table, run_witnesses  # noqa: E402

from tests.support.qa_parity import (  # noqa: E402
    CATEGORIES,
    MODES,
    decode,
    encode,
    parity,
    run_gtog,
)

RESULTS = REPO / "benchmarks" / "results" / "qa_differential.json"
FIXTURE = REPO / "tests" / "fixtures" / "qa" / "ge6_parity.json.gz"
README = REPO / "README.md"
WORKER = Path(__file__).parent / "ge6_worker.py"
VERSION = "6.6.1"
KINDS = ("identical", "differing", "raised", "raised-differing")


def ensure_venv(venv: Path, python: str, extras: bool) -> Path:
    """The throwaway venv's interpreter, with graphrag-eval (and, for `extras`, what its
    test suite needs) installed."""
    exe = venv / "bin" / "python"
    if not exe.exists():
        subprocess.run([python, "-m", "venv", str(venv)], check=True)
    packages = [f"graphrag-eval=={VERSION}", "pyyaml"]  # it imports yaml, undeclared
    if extras:
        packages += ["pytest", "pytest-asyncio", "jsonlines"]
    modules = "graphrag_eval, yaml" + (", pytest, jsonlines" if extras else "")
    check = [str(exe), "-c", f"import {modules}"]
    if subprocess.run(check, capture_output=True).returncode != 0:
        subprocess.run([str(exe), "-m", "pip", "install", "-q", *packages], check=True)
    return exe


def worker(exe: Path, mode: str, data: Any) -> Any:
    with tempfile.TemporaryDirectory() as tmp:
        source, target = Path(tmp) / "in.pickle", Path(tmp) / "out.pickle"
        if mode == "record":
            source = Path(data)
        else:
            source.write_bytes(pickle.dumps(data))
        subprocess.run([str(exe), str(WORKER), mode, str(source), str(target)], check=True)
        result = pickle.loads(target.read_bytes())
    if result["version"] != VERSION:
        raise SystemExit(f"the venv has graphrag-eval {result['version']}, not {VERSION}")
    return result


def upstream_cases(exe: Path, upstream: Path) -> list[tuple[str, Any]]:
    """The calls graphrag-eval's own tests make, deduplicated."""
    with tempfile.TemporaryDirectory() as tmp:
        if (upstream / "tests").is_dir():
            shutil.copytree(upstream / "tests", Path(tmp) / "tests")
        else:  # a git directory without a work tree
            archive = subprocess.run(
                ["git", f"--git-dir={upstream}", "archive", "HEAD", "tests"],
                check=True,
                capture_output=True,
            ).stdout
            subprocess.run(["tar", "x", "-C", tmp], input=archive, check=True)
        cases = worker(exe, "record", Path(tmp) / "tests")["cases"]
    seen, unique = set(), []
    for category, case in cases:
        key = hashlib.sha256(pickle.dumps((category, case))).hexdigest()
        if key not in seen:
            seen.add(key)
            unique.append((category, case))
    return unique


def compare_all(
    exe: Path, cases: list[tuple[str, str, Any, Any]]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Tallies per (group, mode) with a few labels of differing cases, and graphrag-eval's
    outcomes, one per case (group, category, case, label)."""
    outcomes = worker(exe, "run", [(c[1], c[2]) for c in cases])["outcomes"]
    tallies: dict[str, Any] = {}
    for (group, category, case, label), expected in zip(cases, outcomes, strict=True):
        for mode in MODES:
            got = run_gtog(category, case, mode)
            kind = parity(category, case, expected, got)
            entry = tallies.setdefault(group, {}).setdefault(
                mode, {**dict.fromkeys(KINDS, 0), "examples": []}
            )
            entry[kind] += 1
            if kind in ("differing", "raised-differing") and len(entry["examples"]) < 3:
                entry["examples"].append(label)
    return tallies, outcomes


def timing(exe: Path, batches: int, repeat: int) -> dict[str, Any]:
    """Per-call seconds of run_evaluation, graphrag-eval vs gtog, on the same batches."""
    from gtog.qa import run_evaluation

    candidates = [make_case("records", 10_000 + seed) for seed in range(3 * batches)]
    outcomes = worker(exe, "run", [("records", case) for case in candidates])["outcomes"]
    chosen = [  # batches both evaluate without raising (the default mode refuses repeated ids)
        case
        for case, outcome in zip(candidates, outcomes, strict=True)
        if "ok" in outcome and all("ok" in run_gtog("records", case, m) for m in MODES)
    ][:batches]
    ge6 = worker(exe, "time", {"batches": chosen, "repeat": repeat})["seconds"]
    result: dict[str, Any] = {"batches": batches, "repeat": repeat}
    result["graphrag-eval"] = sum(ge6) / len(ge6)
    for mode in MODES:
        per_call = []
        for batch in chosen:
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                run_evaluation(batch["reference"], batch["responses"], semantics=mode)
                best = min(best, time.perf_counter() - start)
            per_call.append(best)
        result[mode] = sum(per_call) / len(per_call)
        result[f"{mode} / graphrag-eval"] = result[mode] / result["graphrag-eval"]
    return result


def counts_table(tallies: dict[str, Any]) -> str:
    lines = [
        "| category | cases | graphrag-eval-6: identical | differing | graphrag-eval raised "
        "(gtog: error) | default: identical | differing |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for group, modes in tallies.items():
        ge6, seed = modes["graphrag-eval-6"], modes["seed"]
        total = sum(ge6[k] for k in KINDS)
        raised = f"{ge6['raised']}" + (
            f" ({ge6['raised-differing']} not)" if ge6["raised-differing"] else ""
        )
        seed_identical = seed["identical"] + seed["raised"]
        seed_differing = seed["differing"] + seed["raised-differing"]
        lines.append(
            f"| {group} | {total:,} | {ge6['identical']:,} | {ge6['differing']:,} | {raised} "
            f"| {seed_identical:,} | {seed_differing:,} |"
        )
    return "\n".join(lines)


def replace_between(text: str, name: str, body: str) -> str:
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def write_fixture(exe: Path, per_category: int, upstream: list[tuple[str, Any]]) -> None:
    cases = [(c, make_case(c, seed)) for c in CATEGORIES for seed in range(per_category)]
    cases += upstream
    # as the test will read them back (JSON loses aliasing between objects, for one)
    cases = [(c, decode(json.loads(json.dumps(encode(case))))) for c, case in cases]
    outcomes = worker(exe, "run", cases)["outcomes"]
    data = {
        "provenance": (
            f"Generated by `python benchmarks/qa_differential.py --write-fixture {per_category}`"
            f": {per_category} seeded cases per category from benchmarks/qa_cases.py (seeds "
            f"0..{per_category - 1}) and {len(upstream)} calls made by graphrag-eval's own "
            "test suite (github.com/Ontotext-AD/graphrag-eval, tests/, Apache-2.0), each with "
            f"the outcome graphrag-eval {VERSION} gave in a throwaway venv (Python "
            f"{platform.python_version()} here; graphrag-eval's Python 3.12 there)."
        ),
        "graphrag_eval_version": VERSION,
        "cases": [
            {"category": c, "case": encode(case), "expected": encode(outcome)}
            for (c, case), outcome in zip(cases, outcomes, strict=True)
        ],
    }
    FIXTURE.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0))
    print(f"wrote {FIXTURE.relative_to(REPO)} ({len(cases)} cases)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000, help="random cases per category")
    parser.add_argument("--upstream", type=Path, help="graphrag-eval checkout or git dir")
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "gtog-ge6-venv")
    parser.add_argument("--python", default="python3.12", help="interpreter for the venv")
    parser.add_argument("--time", action="store_true", help="per-call benchmark")
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-fixture", type=int, metavar="N")
    parser.add_argument("--readme", action="store_true", help="rewrite the README tables")
    args = parser.parse_args()
    exe = ensure_venv(args.venv, args.python, extras=args.upstream is not None)
    upstream = upstream_cases(exe, args.upstream) if args.upstream else []
    cases: list[tuple[str, str, Any, Any]] = []
    for category in CATEGORIES:
        for seed in range(args.cases):
            cases.append((category, category, make_case(category, seed), seed))
    for i, (category, case) in enumerate(upstream):
        cases.append((f"upstream {category}", category, case, f"upstream #{i}"))
    started = time.perf_counter()
    tallies, _ = compare_all(exe, cases)
    results: dict[str, Any] = {
        "graphrag_eval_version": VERSION,
        "python": platform.python_version(),
        "cases_per_category": args.cases,
        "upstream_calls": len(upstream),
        "tallies": tallies,
        "seconds": round(time.perf_counter() - started, 1),
    }
    results["witnesses"] = run_witnesses(exe, worker)
    if args.time:
        results["timing"] = timing(exe, args.batches, args.repeat)
    elif RESULTS.exists():  # keep the last benchmark's figures
        results["timing"] = json.loads(RESULTS.read_text()).get("timing")
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    table = counts_table(tallies)
    print(table)
    print()
    print(readme_table(results["witnesses"]))
    if results.get("timing"):
        print(json.dumps(results["timing"], indent=2))
    if args.write_fixture:
        write_fixture(exe, args.write_fixture, upstream)
    if args.readme:
        text = README.read_text()
        text = replace_between(text, "qa-differential-counts", table)
        witnesses = readme_table(results["witnesses"])
        text = replace_between(text, "qa-differential-witnesses", witnesses)
        README.write_text(text)


if __name__ == "__main__":
    main()

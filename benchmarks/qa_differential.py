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
CI). `--readme`: rewrites the tables between the qa-differential markers of docs/qa-eval.md
(the page that shows them).
Writes benchmarks/out/qa_differential.json (with `--record`: benchmarks/results/) and prints
the tables.
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
from recording import add_record_flag, results_path  # noqa: E402

from tests.support.qa_parity import (  # noqa: E402
    CATEGORIES,
    MODES,
    decode,
    encode,
    parity,
    run_gtog,
)

RESULTS = "qa_differential.json"
FIXTURE = REPO / "tests" / "fixtures" / "qa" / "ge6_parity.json.gz"
PAGE = REPO / "docs" / "qa-eval.md"
"""The page with the qa-differential tables (`--readme` rewrites them)."""
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


def upstream_revision(upstream: Path) -> str:
    """`<commit> (version <v>)` of a graphrag-eval checkout or git directory."""
    git = (
        ["git", f"--git-dir={upstream}"]
        if not (upstream / "tests").is_dir()
        else ["git", "-C", str(upstream)]
    )
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    project = subprocess.run([*git, "show", "HEAD:pyproject.toml"], capture_output=True, text=True)
    version = next(
        (
            line.split("=")[1].strip().strip('"')
            for line in project.stdout.splitlines()
            if line.startswith("version")
        ),
        "?",
    )
    return f"{commit.strip()[:12] or '?'} (version {version})"


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


def _merge(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """One batch of many questions: the cases side by side, ids made unique."""
    reference: list[Any] = []
    responses: dict[str, Any] = {}
    for i, case in enumerate(cases):
        for template in case["reference"]:
            questions = [{**q, "id": f"{i}:{q['id']}"} for q in template["questions"]]
            reference.append({**template, "questions": questions})
        for qid, response in case["responses"].items():
            responses[f"{i}:{qid}"] = {**response, "question_id": f"{i}:{response['question_id']}"}
    return {"reference": reference, "responses": responses}


def _per_call(batches: list[dict[str, Any]], mode: str, repeat: int) -> dict[str, list[float]]:
    """Per batch, the best of `repeat` gtog calls: wall seconds and CPU seconds."""
    from gtog.qa import run_evaluation

    wall, cpu = [], []
    for batch in batches:
        best_wall = best_cpu = float("inf")
        for _ in range(repeat):
            start, start_cpu = time.perf_counter(), time.process_time()
            run_evaluation(batch["reference"], batch["responses"], semantics=mode)  # type: ignore[arg-type]
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
            best_wall = min(best_wall, time.perf_counter() - start)
        wall.append(best_wall)
        cpu.append(best_cpu)
    return {"wall": wall, "cpu": cpu}


def timing(
    exe: Path, batches: int, repeat: int, rounds: int, upstream: list[tuple[str, Any]]
) -> dict[str, Any]:
    """Per-call seconds of run_evaluation, graphrag-eval vs gtog in each mode, on the same
    batches: small ones (one random records case: 1-6 questions), large ones (50 such
    cases in one call) and graphrag-eval's own test data (when given). Per batch the best
    of `rounds` x `repeat` calls, rounds alternating between the two."""
    candidates = [make_case("records", 10_000 + seed) for seed in range(3 * batches)]
    outcomes = worker(exe, "run", [("records", case) for case in candidates])["outcomes"]
    small = [  # batches both evaluate without raising (the default mode refuses repeated ids)
        case
        for case, outcome in zip(candidates, outcomes, strict=True)
        if "ok" in outcome and all("ok" in run_gtog("records", case, m) for m in MODES)
    ][:batches]
    sets = {"small": small, "large": [_merge(small[i : i + 50]) for i in range(0, len(small), 50)]}
    records = [case for category, case in upstream if category == "records"]
    if records:
        sets["graphrag-eval's test data"] = [
            c for c in records if all("ok" in run_gtog("records", c, m) for m in MODES)
        ]
    result: dict[str, Any] = {"repeat": repeat, "rounds": rounds}
    for name, chosen in sets.items():
        best: dict[tuple[str, str], list[float]] = {}
        for _ in range(rounds):  # interleaved, so both see the same machine load
            runs = {"graphrag-eval": worker(exe, "time", {"batches": chosen, "repeat": repeat})}
            runs.update({mode: {"seconds": _per_call(chosen, mode, repeat)} for mode in MODES})
            for who, run in runs.items():
                for clock, values in run["seconds"].items():
                    old = best.get((who, clock), [float("inf")] * len(values))
                    best[(who, clock)] = [min(a, b) for a, b in zip(old, values, strict=True)]
        questions = sum(len(t["questions"]) for b in chosen for t in b["reference"])
        row: dict[str, Any] = {
            "batches": len(chosen),
            "questions per batch": questions / len(chosen),
        }
        for (who, clock), values in best.items():
            row[f"{who} {clock}"] = sum(values) / len(values)
        for mode in MODES:
            for clock in ("wall", "cpu"):
                ratio = row[f"{mode} {clock}"] / row[f"graphrag-eval {clock}"]
                row[f"{mode} / graphrag-eval {clock}"] = ratio
        result[name] = row
    return result


def timing_table(timing: dict[str, Any]) -> str:
    lines = [
        "| batches | questions per call | graphrag-eval 6.6.1 | gtog `graphrag-eval-6` "
        "| gtog default |",
        "|---|---:|---:|---:|---:|",
    ]

    def cell(row: dict[str, Any], who: str) -> str:
        text = f"{row[f'{who} cpu'] * 1000:.2f} ms"
        if who != "graphrag-eval":
            text += f" ({row[f'{who} / graphrag-eval cpu']:.2f}x)"
        return f"{text}, wall {row[f'{who} wall'] * 1000:.2f}"

    for name, row in timing.items():
        if isinstance(row, dict):
            lines.append(
                f"| {name} ({row['batches']}) | {row['questions per batch']:.1f} "
                f"| {cell(row, 'graphrag-eval')} | {cell(row, 'graphrag-eval-6')} "
                f"| {cell(row, 'seed')} |"
            )
    return "\n".join(lines)


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


def write_fixture(
    exe: Path, per_category: int, upstream: list[tuple[str, Any]], revision: str
) -> None:
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
            f"test suite (github.com/Ontotext-AD/graphrag-eval at {revision}, tests/, "
            "Apache-2.0), each with "
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
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write-fixture", type=int, metavar="N")
    parser.add_argument(
        "--readme", action="store_true", help="rewrite the tables in docs/qa-eval.md"
    )
    add_record_flag(parser)
    args = parser.parse_args()
    target = results_path(RESULTS, args.record)
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
        "upstream": upstream_revision(args.upstream) if args.upstream else None,
        "upstream_calls": len(upstream),
        "tallies": tallies,
        "seconds": round(time.perf_counter() - started, 1),
    }
    results["witnesses"] = run_witnesses(exe, worker)
    if args.time:
        results["timing"] = timing(exe, args.batches, args.repeat, args.rounds, upstream)
    elif target.exists():  # keep the last benchmark's figures
        results["timing"] = json.loads(target.read_text()).get("timing")
    target.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {target}")
    table = counts_table(tallies)
    print(table)
    print()
    print(readme_table(results["witnesses"]))
    if results.get("timing"):
        print()
        print(timing_table(results["timing"]))
    if args.write_fixture:
        write_fixture(exe, args.write_fixture, upstream, results["upstream"])
    if args.readme:
        text = PAGE.read_text()
        text = replace_between(text, "qa-differential-counts", table)
        if results.get("timing"):
            timings = timing_table(results["timing"])
            text = replace_between(text, "qa-differential-timing", timings)
        witnesses = readme_table(results["witnesses"])
        text = replace_between(text, "qa-differential-witnesses", witnesses)
        PAGE.write_text(text)


if __name__ == "__main__":
    main()

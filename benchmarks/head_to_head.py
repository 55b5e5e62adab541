"""The 200-call head-to-head run: `gtog eval` end to end beside BenchmarkQED's AutoE.

Issue 45's peer comparison: the same work BenchmarkQED 0.4's AutoE does when it compares
two systems' answers. Two answers files of 100 answers each to the same 100 questions (the
"answers made by other systems" method kind, in BenchmarkQED's own answer format), judged
head to head on one criterion, one trial per order, both orders, no A/A check and no other
metric: exactly 200 calls of the pairwise judge, against the scripted OpenAI-compatible
server (tests/support) answering chat in 200 ms. `gtog eval` runs through the CLI as a
user runs it (a fresh `python -m gtog eval --root DIR -j 20` process, the model-call cache
on as by default, starting empty), and each run reports:

- wall: from the process's start to its exit (imports, configuration, dataset, answers
  files, the judging, statistics, the summary, the CSV and the report);
- CPU: the process's user + system time (rusage of the child);
- span: the server's view of the calls, from the first call's request line to the last
  call's reply (the floor of the wall time at this concurrency: 200 x 0.2 s / 20 = 2 s);
- calls: the chat calls the server answered (checked: exactly 200, all of them the
  pairwise judge's);
- before the first call (the process's start to the first call's request line) and after
  the last call (its reply to the process's exit): what is not the calls' span;
- the machine's load (`os.getloadavg()`) before and after each run.

Runs `--runs` times (default 5), each with a fresh output folder, and records the median;
with `--baseline DIR` another checkout's gtog runs in turn with this one, round by round,
against the same server (before and after at the same load).
BenchmarkQED is not run here: the issue's 22.0 s for AutoE on the same work is quoted as
the issue's figure (`peer` in the results file), not measured.

    python benchmarks/head_to_head.py [--runs 5] [-j 20] [--chat-delay 0.2]
        [--questions 100] [--label current] [--gtog-root PATH] [--baseline PATH]
        [--py-spy PATH] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from recording import add_record_flag, results_path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "head_to_head.json"
INDEX = REPO / "eval" / "indexes" / "lighthouse"
PAIRWISE = "You compare two answers to the same question on one criterion."
PEER = {
    "tool": "BenchmarkQED 0.4 AutoE",
    "wall_s": 22.0,
    "gtog_wall_s_then": 12.2,
    "calls_span_s_then": 2.0,
    "source": "issue 45 (quoted, not measured here: BenchmarkQED is not installed)",
}


def pairwise_judge(request: Any) -> str:
    """Prefers the longer answer; equal lengths are a tie (a judge that reads both)."""
    import re

    m = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\nWhich answer", request.prompt, re.S)
    if not m:
        return '{"winner": 0, "reason": "unreadable prompt"}'
    one, two = len(m.group(1).strip()), len(m.group(2).strip())
    if one == two:
        return '{"winner": 0, "reason": "equally comprehensive"}'
    better = 1 if one > two else 2
    return json.dumps({"winner": better, "reason": f"answer {better} says more"})


def make_root(work: Path, api_base: str, questions: int) -> Path:
    """The index's project (its models pointed at the server), a dataset of `questions`
    questions, two BenchmarkQED answer files and eval_config.yaml."""
    from tests.support.projects import retarget

    shutil.copytree(INDEX, work / "lighthouse", ignore=shutil.ignore_patterns("logs", "cache"))
    retarget(work / "lighthouse", api_base)
    items = [
        {
            "id": f"q{n:03d}",
            "imdb_key": "lighthouse",
            "question": f"What does question {n} ask about the lighthouse on Varn Island?",
            "answer": f"The keeper's answer number {n}.",
        }
        for n in range(questions)
    ]
    (work / "qa.json").write_text(json.dumps(items, indent=1))
    # per question, by n % 4: system_a says more (0 and 1), system_b does (2), a tie (3)
    lengths = {"system_a": (40, 40, 20, 30), "system_b": (25, 25, 35, 30)}
    for system, words in lengths.items():
        answers = [
            {
                "question_id": q["id"],
                "question_text": q["question"],
                "answer": " ".join(
                    f"{system if n % 4 != 3 else 'both'} fact {k} on {q['id']}."
                    for k in range(words[n % 4])
                ),
                "metrics": {"time_seconds": 1.5, "input_tokens": 900, "output_tokens": 120},
            }
            for n, q in enumerate(items)
        ]
        (work / f"{system}.json").write_text(json.dumps(answers, indent=1))
    (work / "eval_config.yaml").write_text(
        "dataset:\n  path: qa.json\n"
        f"indexes:\n  lighthouse: {work / 'lighthouse'}\n"
        "answers:\n"
        "  system_a: {path: system_a.json, format: benchmark-qed}\n"
        "  system_b: {path: system_b.json, format: benchmark-qed}\n"
        "methods: [system_a, system_b]\n"
        "metrics: []\n"
        "pairwise: {criteria: [comprehensiveness], pairs: [[system_a, system_b]], trials: 1, "
        "aa_check: false}\n"
        "output:\n  dir: results\n"
    )
    return work


def eval_cmd(root: Path, out: Path, concurrency: int) -> list[str]:
    """`gtog eval` as a user types it (the cache on, gtog's default)."""
    return [
        sys.executable,
        "-m",
        "gtog",
        "eval",
        "--root",
        str(root),
        "-j",
        str(concurrency),
        "-o",
        str(out),
        "-q",
    ]


def one_run(
    server: Any, root: Path, n: int, concurrency: int, gtog_root: Path, spy: Path | None = None
) -> dict[str, Any]:
    """One `gtog eval` process, timed from its start to its exit; with `spy`, under
    `py-spy record --format raw` into that file (its wall and CPU are then py-spy's too)."""
    from tests.support.projects import subprocess_env

    env = subprocess_env()
    env["PYTHONPATH"] = str(gtog_root)
    out = root / f"out-{n}"
    shutil.rmtree(out, ignore_errors=True)
    server.clear_log()
    load_before = os.getloadavg()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.time()
    cmd = eval_cmd(root, out, concurrency)
    if spy is not None:
        exe = shutil.which("py-spy") or "py-spy"  # (pip install py-spy)
        py_spy = [exe, "record", "--format", "raw", "-r", "200", "--threads"]
        cmd = [*py_spy, "--nonblocking", "-o", str(spy.with_suffix(f".{n}.txt")), "--", *cmd]
    proc = subprocess.run(
        cmd,
        env=env,
        cwd=gtog_root,
        capture_output=True,
        text=True,
    )
    ended = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"gtog eval failed:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    log = list(server.log)
    judged = [e for e in log if e.kind == "chat" and e.rule == "pairwise"]
    if len(log) != len(judged):
        raise SystemExit(f"the server saw calls other than the pairwise judge's: {len(log)}")
    busy, span = server.busy_seconds()
    first = min(e.start for e in log) if log else ended
    last = max(e.end for e in log) if log else ended
    summary = json.loads((out / "eval_results_summary.json").read_text())
    [entry] = summary["pairwise"]
    return {
        "wall_s": round(ended - started, 2),
        "cpu_s": round(cpu, 2),
        "span_s": round(span, 2),
        "in_flight": round(busy / span, 1) if span else None,
        "calls": len(judged),
        "before_first_call_s": round(first - started, 2),
        "after_last_call_s": round(ended - last, 2),
        "comparisons": entry["n"],
        "wins_a": entry["wins_a"],
        "wins_b": entry["wins_b"],
        "ties": entry["ties"],
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def _commit(root: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()


def _median(runs: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("wall_s", "cpu_s", "span_s", "before_first_call_s", "after_last_call_s")
    return {k: round(statistics.median(r[k] for r in runs), 2) for k in keys}


def main() -> None:
    from tests.support.scripted_server import Rule, ScriptedServer
    from tests.support.world import judge_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-j", "--concurrency", type=int, default=20)
    parser.add_argument("--chat-delay", type=float, default=0.2)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--label", default="current", help="key of this run in the JSON")
    parser.add_argument("--gtog-root", type=Path, default=REPO, help="checkout whose gtog runs")
    parser.add_argument("--commit", help="commit of --gtog-root (default: its git HEAD)")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout (e.g. `git archive BASE | tar -x -C DIR`) run in turn with "
        "--gtog-root, round by round, against the same server: before/after at the same load",
    )
    parser.add_argument("--baseline-commit", help="commit of --baseline (default: its git HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    parser.add_argument(
        "--py-spy",
        type=Path,
        help="profile each run with py-spy into PATH.N.txt (raw stacks; figures then "
        "include py-spy's overhead)",
    )
    add_record_flag(parser)
    args = parser.parse_args()

    roots = {"current": args.gtog_root}
    if args.baseline is not None:
        roots = {"baseline": args.baseline, **roots}
    rules = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, pairwise_judge), *judge_rules()]
    work = Path(tempfile.mkdtemp(prefix="gtog-h2h-"))
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in roots}
    try:
        with ScriptedServer(rules, embedding_dims=384, delay=args.chat_delay) as server:
            root = make_root(work, server.base_url, args.questions)
            for n in range(args.runs):
                for which, gtog_root in roots.items():
                    spy = args.py_spy if which == "current" else None
                    row = one_run(server, root, n, args.concurrency, gtog_root, spy)
                    if row["calls"] != 2 * args.questions:
                        raise SystemExit(f"expected {2 * args.questions} calls: {row['calls']}")
                    runs[which].append(row)
                    print(which, json.dumps(row), flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    entry: dict[str, Any] = {
        "commit": args.commit or _commit(args.gtog_root),
        "gtog_root": str(args.gtog_root),
        "concurrency": args.concurrency,
        "chat_delay_s": args.chat_delay,
        "questions": args.questions,
        "calls": 2 * args.questions,
        "cpus": os.cpu_count(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "median": _median(runs["current"]),
        "runs": runs["current"],
    }
    if args.baseline is not None:
        entry["baseline"] = {
            "commit": args.baseline_commit or _commit(args.baseline),
            "median": _median(runs["baseline"]),
            "runs": runs["baseline"],
        }
    entry["peer"] = PEER
    print(json.dumps({k: v for k, v in entry.items() if k != "runs"}, indent=1))
    path = results_path(RESULTS, args.record)
    data = json.loads(path.read_text()) if path.is_file() else {}
    data[args.label] = entry
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Throughput of `gtog eval`: calls in flight, pairs per second and CPU per pair by stage.

Starts the scripted OpenAI-compatible server (tests/support) with a chat and an embeddings
delay (a remote endpoint's latency), copies the example indexes (eval/indexes/*) to a temp
folder and points them at the server, generates a dataset of N questions per index (the
example questions, repeated with a suffix), and runs `gtog eval` through the CLI once per
method at the given concurrency. Per method it prints:

- in flight: sum of the server-side durations of all calls / the span from the first
  call's start to the last call's end (the mean number of calls being served);
- pairs/s: (question, method) pairs / span, and the ideal, concurrency / (server time per
  pair), i.e. what a client with zero overhead would reach; in flight / concurrency is
  the same ratio;
- CPU ms per pair: the eval process's CPU (rusage) minus a one-question run's (startup:
  imports, engines), per pair; with py-spy (on PATH, or --py-spy) instead, the split by
  stage (context building, LLM client, judging, search (other), bookkeeping, event loop
  and other, and "no Python frame": native code py-spy cannot attribute) from active
  samples of all threads. py-spy counts a thread waiting for a CPU as active, so on a
  loaded machine its figures run high; compare stages, not totals.
- between calls (`gaps`, from the server's log, local and basic with one judged metric and
  the floors): the time from the embedding's reply to the answer's request and from the
  answer's reply to the judge's request (medians), and each slot's time a pair not
  waiting on the server (concurrency x span / pairs - server time a pair);
- `--processes k` runs k `gtog eval --shard i/k` at once (concurrency split between them)
  and merges them: worker processes when one core is the limit.

Two reference rows (`--floors`, on by default) show what the machine allows: the same
calls per pair as local search (one embedding, the answer, one judge call), made by a
separate process at the same concurrency against the same server, with no search work:

- `floor: aiohttp`: plain HTTP calls (the server's and the machine's ceiling);
- `floor: graphrag_llm`: the calls through graphrag_llm/LiteLLM, the client every gtog
  call goes through (the ceiling of any search built on it).

Those two send short requests of their own. After each run of local or basic (one judged
metric: an embedding, an answer and a judge call a pair), `--replay-floors` (on by
default) sends that run's own requests again, in order, through graphrag_llm alone
(`floor: graphrag_llm, replayed`: the answer's prompt with its context, the judge's prompt
and `response_format`), and the run's row also reads its calls in flight against that
(`replay_share`).

The server's time of a call runs from its request line to the end of its reply.

Calls in flight move by several points from one run to the next on the same code (the
floor too: 13.8-14.4 on the idle machine): `--repeats k` measures the floors and every
method k times, round after round, reads each share against its own round's floor, and
records the median and range (`summary`).

The machine's load (`os.getloadavg()`) is recorded with every figure, and on Linux the
share of the machine's CPU time its hypervisor gave to others during each run (`steal`,
from /proc/stat): a virtual machine slowed from outside shows it there. `--gtog-root` runs
another checkout's `gtog` (e.g. the base commit in a temp worktree) against the same
server, for before/after figures.

    python benchmarks/throughput.py [--methods local,basic,tog] [-j 16] [--chat-delay 0.2]
        [--embedding-delay 0.1] [--questions 128] [--label after] [--gtog-root PATH]
        [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from recording import add_record_flag, results_path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SPY_ARGS: list[str] = []
RESULTS = "throughput.json"
INDEXES = REPO / "eval" / "indexes"
EXAMPLE_QA = REPO / "eval" / "qa_eval.json"

# Stage of a sampled stack: the first rule whose marker appears in any frame wins.
STAGES: list[tuple[str, tuple[str, ...]]] = [
    (
        "startup",
        ("_find_and_load", "gtog/eval/run/_preparation.py:prepare", "build_engine", "load_project"),
    ),
    ("context building", ("build_context", "map_query_to_entities", "lancedb/")),
    ("search (other)", ("Tokenizer.encode",)),  # graphrag's own token estimates
    ("LLM client", ("litellm/", "graphrag_llm/", "httpx/", "httpcore/", "openai/", "aiohttp/")),
    ("judging", ("gtog/eval/judges.py",)),
    ("search (other)", ("graphrag/query/", "gtog/tog/", "engines.py:")),
    (
        "bookkeeping",
        ("gtog/eval/checkpoint.py", "gtog/eval/results.py", "write_results", "pydantic"),
    ),
]


def _stage(stack: str) -> str:
    for name, markers in STAGES:
        if any(m in stack for m in markers):
            return name
    return "event loop, other"


def stage_cpu(raw: Path, rate: int) -> dict[str, float]:
    """CPU seconds per stage from py-spy's raw (collapsed) output."""
    out: Counter[str] = Counter()
    for line in raw.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        if not stack.strip():
            out["no Python frame"] += int(count) / rate
            continue
        # frames look like "func (path/to/file.py:123)"; match on "path/file.py:func" too
        frames = [f.strip() for f in stack.split(";")]
        text = ";".join(frames) + ";" + ";".join(_qualified(f) for f in frames)
        out[_stage(text)] += int(count) / rate
    return dict(out)


def _qualified(frame: str) -> str:
    func, _, where = frame.partition(" (")
    path = where.rsplit(":", 1)[0]
    return f"{path}:{func}"


def cpu_times() -> list[int] | None:
    """The machine's CPU time so far by kind (`/proc/stat`'s first line, in ticks: user,
    nice, system, idle, iowait, irq, softirq, steal, ...); None where there is no such file."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            return [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None


def steal_share(before: list[int] | None) -> float | None:
    """Of the machine's CPU time since `before`, the share the hypervisor gave to others
    (steal): a virtual machine's run slowed from outside shows it here."""
    after = cpu_times()
    if before is None or after is None or len(after) < 8:
        return None
    spent = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(spent[:8])
    return round(spent[7] / total, 3) if total > 0 else None


def make_root(work: Path, api_base: str, per_index: int, metrics: list[str]) -> Path:
    """Indexes (copied, retargeted), a generated dataset and eval_config.yaml."""
    from tests.support.projects import retarget

    base = json.loads(EXAMPLE_QA.read_text())
    keys = sorted(p.name for p in INDEXES.iterdir() if (p / "settings.yaml").is_file())
    items = []
    for key in keys:
        shutil.copytree(INDEXES / key, work / key, ignore=shutil.ignore_patterns("logs", "cache"))
        retarget(work / key, api_base)
        mine = [q for q in base if q["imdb_key"] == key]
        for n in range(per_index):
            q = mine[n % len(mine)]
            suffix = "" if n < len(mine) else f" (variant {n // len(mine)})"
            items.append({**q, "id": f"{q['id']}-{n}", "question": q["question"] + suffix})
    (work / "qa.json").write_text(json.dumps(items, indent=1))
    index_lines = "\n".join(f"  {k}: {work / k}" for k in keys)
    (work / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{index_lines}\n"
        f"metrics: [{', '.join(metrics)}]\noutput:\n  dir: results\n"
        "tog_search: {width: 3, depth: 2}\n"
    )
    return work


def _eval_cmd(
    root: Path, method: str, concurrency: int, out: Path, *extra: str, cache: bool = False
) -> list[str]:
    """`gtog eval` of one method into `out`; with `cache`, the model-call cache on (gtog's
    default, in OUT/cache), else `--no-cache`."""
    cmd = [sys.executable, "-m", "gtog", "eval", "--root", str(root), "-m", method]
    cmd += ["-j", str(concurrency), "-o", str(out), "-q", "--force"]
    return [*cmd, *([] if cache else ["--no-cache"]), *extra]


def _spawn(cmds: list[list[str]], gtog_root: Path) -> tuple[float, float]:
    """Run the commands at once; (wall seconds, CPU seconds of them all)."""
    from tests.support.projects import subprocess_env

    env = subprocess_env()
    env["PYTHONPATH"] = str(gtog_root)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    procs = [
        subprocess.Popen(
            c, env=env, cwd=gtog_root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for c in cmds
    ]
    outputs = [p.communicate() for p in procs]
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    for p, (stdout, stderr) in zip(procs, outputs, strict=True):
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(p.args)} failed:\n{stdout}\n{stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def run_method(
    server: Any,
    root: Path,
    method: str,
    concurrency: int,
    gtog_root: Path,
    py_spy: str | None,
    rate: int,
    processes: int = 1,
    cache: bool = False,
) -> dict[str, Any]:
    """One `gtog eval -m METHOD` run (or `processes` shards at once, then merged), with the
    model-call cache on (starting empty: every call is sent and stored) or `--no-cache`."""
    from gtog.eval.run._merge import merge_runs

    # startup CPU (imports, engines): a one-question run, subtracted from the full run's
    _, startup_cpu = _spawn(
        [_eval_cmd(root, method, concurrency, root / "probe", "--limit", "1")], gtog_root
    )
    mode = "cache" if cache else "no-cache"
    out = root / f"out-{method}-{processes}-{mode}"
    shutil.rmtree(out, ignore_errors=True)  # an empty cache: every call goes out
    raw = root / f"stacks-{method}-{mode}.txt"
    if processes > 1:
        share = -(-concurrency // processes)
        cmds = [
            _eval_cmd(root, method, share, out, "--shard", f"{i}/{processes}", cache=cache)
            for i in range(processes)
        ]
    else:
        cmds = [_eval_cmd(root, method, concurrency, out, cache=cache)]
        if py_spy:
            spy_mode = SPY_ARGS or ["--nonblocking"]  # --native samples need a paused process
            cmds = [[py_spy, "record", *spy_mode, "--format", "raw", "-r", str(rate)]]
            cmds[0] += [
                "-o",
                str(raw),
                "--",
                *_eval_cmd(root, method, concurrency, out, cache=cache),
            ]
    server.clear_log()
    load_before = os.getloadavg()
    ticks = cpu_times()
    own = resource.getrusage(resource.RUSAGE_SELF)
    wall, cpu = _spawn(cmds, gtog_root)
    steal = steal_share(ticks)
    own_after = resource.getrusage(resource.RUSAGE_SELF)
    server_cpu = own_after.ru_utime - own.ru_utime + own_after.ru_stime - own.ru_stime
    busy, span = server.busy_seconds()
    kinds = Counter(e.kind for e in server.log)
    if processes > 1:
        merged = merge_runs(
            out / "merged", [out / f"shard-{i}-of-{processes}" for i in range(processes)]
        )
        out = merged.out
    summary = json.loads((out / "eval_results_summary.json").read_text())
    group = summary["by_method"][method]
    pairs = group["n"]
    row: dict[str, Any] = {
        "method": method,
        "cache": "on" if cache else "off",
        "processes": processes,
        "pairs": pairs,
        "search_errors": group["search_errors"],
        "calls": dict(kinds),
        "in_flight": round(busy / span, 2),
        "in_flight_share": round(busy / span / concurrency, 3),
        "pairs_per_s": round(pairs / span, 2),
        "ideal_pairs_per_s": round(concurrency / (busy / pairs), 2),
        "server_s_per_pair": round(busy / pairs, 3),
        "span_s": round(span, 2),
        "wall_s": round(wall, 2),
        "avg_latency_s": summary["efficiency"][method]["avg_latency"],
        "avg_queue_wait_s": summary["efficiency"][method].get("avg_queue_wait"),
        "cpu_s_process": round(cpu, 2),
        "cpu_s_startup": round(startup_cpu, 2),
        "cpu_s_server": round(server_cpu, 2),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "steal": steal,
    }
    gaps = pair_gaps(server.log, concurrency, pairs, busy, span)
    if gaps["pairs_matched"] == pairs:  # (one embedding, answer and judge call a pair)
        row["gaps"] = gaps
    if not py_spy or processes > 1:  # (py-spy does not pass on its child's rusage)
        row["cpu_ms_per_pair_total"] = round(1000 * (cpu - processes * startup_cpu) / pairs, 1)
    if py_spy and processes == 1 and raw.is_file():
        stages = stage_cpu(raw, rate)
        row["cpu_ms_per_pair"] = {
            k: round(1000 * v / pairs, 1) for k, v in sorted(stages.items()) if k != "startup"
        }
        row["cpu_ms_per_pair_sampled"] = round(sum(row["cpu_ms_per_pair"].values()), 1)
    return row


def method_requests(server: Any, pairs: int, path: Path) -> bool:
    """Write the requests of the run just made (`floor_client.py replay`'s file) if each of
    its `pairs` made one embedding, one answer and one judge call (local, basic with one
    judged metric); False (nothing written) otherwise."""
    sent = []
    for entry in sorted(server.log, key=lambda e: e.start or e.time):
        judge = (entry.rule or "").startswith("judge")
        body = {"input": [entry.prompt]} if entry.kind == "embeddings" else entry.request
        sent.append({"kind": entry.kind, "judge": judge, "body": body})
    counts = Counter((r["kind"], r["judge"]) for r in sent)
    if sorted(counts.values()) != [pairs] * 3 or ("embeddings", False) not in counts:
        return False
    path.write_text(json.dumps(sent), encoding="utf-8")
    return True


_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)


def pair_gaps(
    log: list[Any], concurrency: int, pairs: int, busy: float, span: float
) -> dict[str, Any]:
    """Where a pair's time goes between its calls, from the server's log alone: for each
    question with one embedding, one answer and one judge request (local or basic with one
    judged metric; the floors' own "floor question i" / "floor judge i" pairs), the time
    from the embedding's reply to the answer's request (`to_answer_ms`: the search's
    context and the answer's preparation) and from the answer's reply to the judge's
    request (`to_judge_ms`), median and mean; and `client_ms_per_pair`, the time each slot
    spends per pair not waiting on the server (concurrency x span / pairs - server time a
    pair, the first round and the last included; `busy` and `span` as the server's
    `busy_seconds`)."""
    calls: dict[str, dict[str, list[Any]]] = {}
    for entry in log:
        text = entry.prompt
        if entry.kind == "embeddings":
            key, role = text.strip(), "embedding"
        elif text.startswith("floor judge "):
            key, role = text.replace("floor judge", "floor question", 1), "judge"
        elif (entry.rule or "").startswith("judge"):
            found = _QUESTION.search(text)
            key, role = (found.group(1).strip() if found else ""), "judge"
        else:
            key, role = text.rsplit("\n", 1)[-1].strip(), "answer"
        calls.setdefault(key, {}).setdefault(role, []).append(entry)
    to_answer, to_judge = [], []
    for roles in calls.values():
        if sorted((r, len(v)) for r, v in roles.items()) != [
            ("answer", 1),
            ("embedding", 1),
            ("judge", 1),
        ]:
            continue
        (embedding,), (answer,), (judge,) = roles["embedding"], roles["answer"], roles["judge"]
        to_answer.append(answer.start - embedding.end)
        to_judge.append(judge.start - answer.end)
    gaps: dict[str, Any] = {"pairs_matched": len(to_answer)}
    if not to_answer:
        return gaps
    gaps["client_ms_per_pair"] = round(1000 * (concurrency * span - busy) / pairs, 1)
    for name, values in (("to_answer_ms", to_answer), ("to_judge_ms", to_judge)):
        gaps[name] = {
            "median": round(1000 * statistics.median(values), 1),
            "mean": round(1000 * statistics.mean(values), 1),
        }
    return gaps


def run_floor(
    server: Any, kind: str, concurrency: int, pairs: int, requests: Path | None = None
) -> dict[str, Any]:
    """The reference row: `pairs` x (embedding, chat, chat) from a client process of `kind`
    (`replay`: the requests in `requests`, see `method_requests`)."""
    from tests.support.projects import subprocess_env

    cmd = [sys.executable, str(REPO / "benchmarks" / "floor_client.py"), kind, server.base_url]
    proc = subprocess.Popen(
        [*cmd, str(concurrency), str(pairs), *([str(requests)] if requests else [])],
        env=subprocess_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdout.readline()  # ready: warmed up
    server.clear_log()
    load_before = os.getloadavg()
    ticks = cpu_times()
    proc.stdin.write("go\n")
    proc.stdin.flush()
    stdout, stderr = proc.communicate()
    steal = steal_share(ticks)
    if proc.returncode != 0:
        raise SystemExit(f"floor client {kind} failed:\n{stderr}")
    cpu = float(stdout.split("cpu ", 1)[1])
    busy, span = server.busy_seconds()
    return {
        "method": f"floor: {kind}" if kind != "replay" else "floor: graphrag_llm, replayed",
        "pairs": pairs,
        "in_flight": round(busy / span, 2),
        "in_flight_share": round(busy / span / concurrency, 3),
        "pairs_per_s": round(pairs / span, 2),
        "ideal_pairs_per_s": round(concurrency / (busy / pairs), 2),
        "span_s": round(span, 2),
        "cpu_ms_per_pair_total": round(1000 * cpu / pairs, 1),
        "load_before": [round(x, 2) for x in load_before],
        "steal": steal,
        "gaps": pair_gaps(server.log, concurrency, pairs, busy, span),
    }


def main() -> None:
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", default="local,basic,tog")
    parser.add_argument("-j", "--concurrency", type=int, default=16)
    parser.add_argument("--chat-delay", type=float, default=0.2)
    parser.add_argument("--embedding-delay", type=float, default=0.1)
    parser.add_argument("--questions", type=int, default=128, help="questions per index")
    parser.add_argument("--metrics", default="correctness", help="judged metrics (comma list)")
    parser.add_argument("--label", default="current", help="key of this run in the JSON")
    parser.add_argument("--gtog-root", type=Path, default=REPO, help="checkout whose gtog runs")
    parser.add_argument("--py-spy", default=shutil.which("py-spy"), help="py-spy executable")
    parser.add_argument("--no-profile", action="store_true", help="do not run py-spy")
    parser.add_argument("--native", action="store_true", help="py-spy --native (C frames)")
    parser.add_argument(
        "--gil", action="store_true", help="py-spy --gil: sample only the thread holding the lock"
    )
    parser.add_argument("--processes", type=int, default=1, help="shards run at once")
    parser.add_argument(
        "--cache",
        choices=("both", "on", "off"),
        default="both",
        help="run each method with the model-call cache on (gtog's default; an empty cache, "
        "so every call is sent and stored), with --no-cache, or both (default)",
    )
    parser.add_argument("--rate", type=int, default=100, help="py-spy samples per second")
    parser.add_argument(
        "--output",
        type=Path,
        help="results file (default: benchmarks/out/ or, with --record, "
        "benchmarks/results/throughput.json)",
    )
    add_record_flag(parser)
    parser.add_argument("--commit", help="commit of --gtog-root (default: its git HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (and stacks)")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="measure the floors and every method this many times, in turn; each share is "
        "read against its own round's floor, and the summary gives the median and range",
    )
    parser.add_argument(
        "--floors",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also measure the aiohttp and graphrag_llm reference clients",
    )
    parser.add_argument(
        "--replay-floors",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="after each run of local or basic, replay its own requests through graphrag_llm "
        "alone (floor: graphrag_llm, replayed) and read the run's calls in flight against "
        "it too (replay_share)",
    )
    args = parser.parse_args()
    py_spy = None if args.no_profile else args.py_spy
    if args.native:
        SPY_ARGS.append("--native")
    if args.gil:
        SPY_ARGS.extend(["--gil", "--nonblocking"])

    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    rows = []
    work = Path(tempfile.mkdtemp(prefix="gtog-tput-"))
    try:
        with ScriptedServer(
            rules,
            embedding_dims=384,
            delay=args.chat_delay,
            embedding_delay=args.embedding_delay,
        ) as server:
            root = make_root(work, server.base_url, args.questions, args.metrics.split(","))
            caches = {"both": (True, False), "on": (True,), "off": (False,)}[args.cache]
            for repeat in range(args.repeats):  # a round: the floors, then every method
                for kind in ("aiohttp", "graphrag_llm") if args.floors else ():
                    row = run_floor(server, kind, args.concurrency, 2 * args.questions)
                    rows.append({**row, "repeat": repeat})
                    print(_line(row, args.concurrency), flush=True)
                for method in args.methods.split(","):
                    for cache in caches:
                        row = run_method(
                            server,
                            root,
                            method,
                            args.concurrency,
                            args.gtog_root,
                            py_spy,
                            args.rate,
                            args.processes,
                            cache,
                        )
                        rows.append({**row, "repeat": repeat})
                        print(_line(row, args.concurrency), flush=True)
                        requests = root / "requests.json"
                        if args.replay_floors and method_requests(server, row["pairs"], requests):
                            floor = run_floor(
                                server, "replay", args.concurrency, row["pairs"], requests
                            )
                            floor.update(replays=method, cache=row["cache"], repeat=repeat)
                            share = round(row["in_flight"] / floor["in_flight"], 3)
                            rows[-1]["replay_share"] = share  # (the method's row)
                            rows.append(floor)
                            print(_line(floor, args.concurrency), flush=True)
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)

    floors = {r["repeat"]: r for r in rows if r["method"] == "floor: graphrag_llm"}
    for row in rows:  # the figure: calls in flight as a share of the client's floor
        floor = floors.get(row["repeat"])  # (of the same round)
        if floor is not None and not row["method"].startswith("floor"):
            row["floor_share"] = round(row["in_flight"] / floor["in_flight"], 3)
    summary = share_summary(rows)
    for line in summary:
        spread = (
            ""
            if line["repeats"] == 1
            else (
                f" (median of {line['repeats']}: "
                f"{100 * line['floor_share_min']:.0f}-{100 * line['floor_share_max']:.0f}%)"
            )
        )
        replayed = (
            f"; {100 * line['replay_share_median']:.0f}% of its own requests replayed "
            f"({100 * line['replay_share_min']:.0f}-{100 * line['replay_share_max']:.0f}%)"
            if "replay_share_median" in line
            else ""
        )
        print(
            f"{line['method']} ({line['cache']}): "
            f"{100 * line['floor_share_median']:.0f}% of the floor{spread}{replayed}"
        )
    head = (
        args.commit
        or subprocess.run(
            ["git", "-C", str(args.gtog_root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    entry = {
        "commit": head,
        "gtog_root": str(args.gtog_root),
        "concurrency": args.concurrency,
        "chat_delay_s": args.chat_delay,
        "embedding_delay_s": args.embedding_delay,
        "questions": 2 * args.questions,
        "metrics": args.metrics.split(","),
        "cpus": os.cpu_count(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "cache": args.cache,
        "repeats": args.repeats,
        "methods": rows,
        "summary": summary,
    }
    args.output = args.output or results_path(RESULTS, args.record)
    data = json.loads(args.output.read_text()) if args.output.is_file() else {}
    data[args.label] = entry
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {args.output} [{args.label}]")


def share_summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per method and cache mode: the median, lowest and highest share of the floor over
    the rounds (one round: that round's share)."""
    import statistics

    shares: dict[tuple[str, str], list[float]] = {}
    replayed: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        if "floor_share" in row:
            shares.setdefault((row["method"], row["cache"]), []).append(row["floor_share"])
        if "replay_share" in row:
            replayed.setdefault((row["method"], row["cache"]), []).append(row["replay_share"])
    out = []
    for (method, cache), values in shares.items():
        line = {
            "method": method,
            "cache": cache,
            "repeats": len(values),
            "floor_share_median": round(statistics.median(values), 3),
            "floor_share_min": min(values),
            "floor_share_max": max(values),
        }
        again = replayed.get((method, cache))
        if again:
            line["replay_share_median"] = round(statistics.median(again), 3)
            line["replay_share_min"] = min(again)
            line["replay_share_max"] = max(again)
        out.append(line)
    return out


def _gap_text(row: dict[str, Any]) -> str:
    gaps = row.get("gaps") or {}
    if "to_answer_ms" not in gaps:
        return ""
    return (
        f", between calls (median): to the answer {gaps['to_answer_ms']['median']:g} ms, "
        f"to the judge {gaps['to_judge_ms']['median']:g} ms; "
        f"client {gaps['client_ms_per_pair']:g} ms a pair"
    )


def _line(row: dict[str, Any], concurrency: int) -> str:
    if row["method"].startswith("floor"):
        return (
            f"{row['method']}: in flight {row['in_flight']:.1f}/{concurrency} "
            f"({100 * row['in_flight_share']:.0f}%), {row['pairs_per_s']:.1f} pairs/s "
            f"(ideal {row['ideal_pairs_per_s']:.1f}), CPU ms/pair {row['cpu_ms_per_pair_total']}, "
            f"load {row['load_before'][0]:.2f}{_steal_text(row)}{_gap_text(row)}"
        )
    cpu = row.get("cpu_ms_per_pair")
    stages = ", ".join(f"{k} {v:g}" for k, v in cpu.items()) if cpu else "-"
    name = f"{row['method']} ({'cache' if row.get('cache') == 'on' else 'no cache'})"
    return (
        f"{name:>18}: in flight {row['in_flight']:.1f}/{concurrency} "
        f"({100 * row['in_flight_share']:.0f}%), {row['pairs_per_s']:.1f} pairs/s "
        f"(ideal {row['ideal_pairs_per_s']:.1f}), latency {row['avg_latency_s']:.2f}s, "
        f"CPU ms/pair {row.get('cpu_ms_per_pair_total', row.get('cpu_ms_per_pair_sampled'))} "
        f"[sampled: {stages}], "
        f"server CPU {row['cpu_s_server'] / row['span_s']:.2f} s/s, "
        f"load {row['load_before'][0]:.2f}{_steal_text(row)}{_gap_text(row)}"
    )


def _steal_text(row: dict[str, Any]) -> str:
    steal = row.get("steal")
    return "" if steal is None else f", steal {100 * steal:.1f}%"


if __name__ == "__main__":
    main()

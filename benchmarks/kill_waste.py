"""What twenty `kill -9`s cost: model requests of a killed-and-resumed run against an
uninterrupted one, with the model-call cache and without (`--no-cache`), and how many of
the requests paid twice were in flight at a kill (the floor: no cache can keep a reply
that has not arrived).

Runs over the two example stories, indexed with real graphrag against the scripted
server (replies after 50 ms), 10 questions, the four judges:

- `small`: local and basic (20 pairs), `-j 2`, the run of
  tests/integration/eval/test_failsafe.py's twenty-kills test, killed with the cache and
  with `--no-cache`;
- `study`: the example study's five methods, tog (width 2, depth 2), local, basic, global
  and drift (50 pairs), `-j 2`, killed with the cache;
- `study_arrived`: the same, its even rounds killed as a chat request arrives (below);
- `study_j8`: the same at `-j 8`.

Each is killed (SIGKILL) in even rounds as soon as a new chat request reaches the server
(`decided`: the server has logged it, its reply decided after its 50 ms and about to be
written, so the kill lands a few ms after the reply is on the wire; `arrived`: as the
server reads it, so the kill lands during its 50 ms), in odd rounds as soon as a record
lands, then resumed, until every pair is done or 20 kills. Every request the server sees is
counted, the killed runs' included; a request is "repeated" when the server saw the same
one before (kind, text and body). Each repeat is put down to what became of the request
it repeats, in the process that sent it:

- `in_flight`: its reply was not whole on the wire when SIGKILL was sent (the server was
  still deciding or writing it, or read the request only after): the floor, nothing a
  client can keep;
- `replied_unstored`: the server had written the whole reply before the kill, and the
  killed process had not stored it yet (it was in the client's socket, being parsed, or
  on its way to the cache): the window between a reply arriving and its cache write;
- `other`: anything else (sent twice by one process, or after a run that ended by itself).

`waste_above_floor` = repeated - in_flight_at_kills. `store_latency_ms`: in the
uninterrupted run, from the server's last byte of a chat reply to the cache entry's
`saved` time (the window above), matched by reply id.

    python benchmarks/kill_waste.py [--record] [--case NAME ...]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "kill_waste.json"

STUDY = ("tog", "local", "basic", "global", "drift")
CASES: dict[str, tuple[tuple[str, ...], int, bool, str]] = {
    # name: (methods, -j, also without the cache, when even rounds kill)
    "small": (("local", "basic"), 2, True, "decided"),
    "study": (STUDY, 2, False, "decided"),
    "study_arrived": (STUDY, 2, False, "arrived"),
    "study_j8": (STUDY, 8, False, "decided"),
}
QUESTIONS = 10


@dataclass
class Round:
    """One `gtog eval` process: when it was started and when it was killed (None: it
    ended by itself)."""

    started: float
    killed: float | None = None


def _config(root: Path, indexes: dict[str, Path], methods: tuple[str, ...]) -> Path:
    root.mkdir(parents=True)
    shutil.copy(REPO / "eval" / "qa_eval.json", root / "qa.json")
    lines = "\n".join(f"  {k}: {p}" for k, p in indexes.items())
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{lines}\nmethods: [{', '.join(methods)}]\n"
        "output:\n  dir: results\nconcurrency: 4\ntog_search: {width: 2, depth: 2}\n"
    )
    return root


def _landed(checkpoint: Path) -> int:
    if not checkpoint.exists():
        return 0
    keys = set()
    for line in checkpoint.read_bytes().split(b"\n")[1:]:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        keys.add((r["qid"], r["method"]))
    return len(keys)


def _killed_run(
    server: Any, root: Path, pairs: int, jobs: int, extra: list[str], trigger: str
) -> dict[str, Any]:
    from tests.support.projects import subprocess_env

    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    base = [sys.executable, "-m", "gtog", "eval", "--root", str(root), "-j", str(jobs), "-q"]
    server.clear_log()
    rounds: list[Round] = []
    for round_ in range(40):
        if _landed(checkpoint) == pairs or len([r for r in rounds if r.killed]) == 20:
            break
        before, requests = _landed(checkpoint), _chat_requests(server, trigger)
        cmd = base + (["--resume"] if checkpoint.exists() else [])
        rounds.append(Round(time.time()))
        proc = subprocess.Popen(
            cmd, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if round_ % 2 == 0 and _chat_requests(server, trigger) > requests:
                break
            if round_ % 2 == 1 and _landed(checkpoint) > before:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            rounds[-1].killed = time.time()
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    rounds.append(Round(time.time()))
    final = subprocess.run([*base, "--resume"], env=subprocess_env(), capture_output=True)
    if final.returncode != 0:
        raise SystemExit(final.stderr.decode()[-2000:])
    time.sleep(0.2)  # the replies a killed run left open are logged
    log = list(server.log)
    return {"requests": len(log), **_repeats(log), **_waste(log, rounds)}


def _chat_requests(server: Any, trigger: str) -> int:
    """Chat requests the server has read (`arrived`) or decided the reply of (`decided`:
    logged, about to be written)."""
    if trigger == "arrived":
        return server.arrived.get("chat", 0)
    return len(server.chat_log())


def _repeats(log: list[Any]) -> dict[str, Any]:
    """Requests sent more than once (same kind, text and body): by the server's rule."""
    seen: set[str] = set()
    by_rule: dict[str, int] = {}
    for entry in log:
        body = entry.identity
        if body in seen:
            rule = entry.rule or entry.kind
            by_rule[rule] = by_rule.get(rule, 0) + 1
        seen.add(body)
    return {
        "distinct": len(seen),
        "repeated": sum(by_rule.values()),
        "repeated_by_rule": dict(sorted(by_rule.items())),
    }


def _round_of(start: float, rounds: list[Round]) -> int:
    """The round whose process sent a request the server read at `start`."""
    found = 0
    for i, r in enumerate(rounds):
        if r.started <= start:
            found = i
    return found


def _in_flight(entry: Any, kill: float) -> bool:
    """The entry's reply was not whole on the wire when SIGKILL was sent at `kill`."""
    return entry.start > kill or entry.cut or not entry.end or entry.end > kill


def _count(items: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return dict(sorted(out.items()))


def _waste(log: list[Any], rounds: list[Round]) -> dict[str, Any]:
    """The floor (requests in flight at each kill) and each repeat put down to what became
    of the request it repeats (see the module's docstring)."""
    log = sorted(log, key=lambda e: e.start or e.time)
    rule = lambda e: e.rule or e.kind  # noqa: E731
    per_kill: list[list[str]] = []
    flying: set[int] = set()
    kills = [i for i, r in enumerate(rounds) if r.killed is not None]
    for i in kills:
        kill = rounds[i].killed
        assert kill is not None
        mine = [e for e in log if _round_of(e.start or e.time, rounds) == i]
        hit = [e for e in mine if _in_flight(e, kill)]
        flying.update(id(e) for e in hit)
        per_kill.append([rule(e) for e in hit])
    last: dict[str, Any] = {}
    cause: dict[str, list[str]] = {"in_flight": [], "replied_unstored": [], "other": []}
    gaps: list[float] = []
    for e in log:
        before = last.get(e.identity)
        last[e.identity] = e
        if before is None:
            continue
        i = _round_of(before.start or before.time, rounds)
        kill = rounds[i].killed
        if id(before) in flying:
            cause["in_flight"].append(rule(e))
        elif kill is not None and _round_of(e.start or e.time, rounds) > i:
            cause["replied_unstored"].append(rule(e))
            gaps.append(round((kill - before.end) * 1000, 1))
        else:
            cause["other"].append(rule(e))
    floor = sum(len(k) for k in per_kill)
    repeated = sum(len(v) for v in cause.values())
    return {
        "kills": len(kills),
        "in_flight_at_kills": floor,
        "in_flight_per_kill": [len(k) for k in per_kill],
        "in_flight_by_rule": _count([r for k in per_kill for r in k]),
        "waste_above_floor": repeated - floor,
        "repeats_by_cause": {k: len(v) for k, v in cause.items()},
        "repeats_by_cause_and_rule": {k: _count(v) for k, v in cause.items() if v},
        "replied_unstored_ms_before_kill": sorted(gaps),
    }


def _store_latency(log: list[Any], cache: Path) -> dict[str, Any]:
    """Milliseconds from the server's last byte of each chat reply to its cache entry's
    `saved` time (matched by reply id)."""
    ends = {e.reply_id: e.end for e in log if e.reply_id and e.end}
    waits = []
    for path in cache.glob("*/*.json"):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            reply = data["result"]["response"]["id"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if reply in ends:
            waits.append((data["saved"] - ends[reply]) * 1000)
    if not waits:
        return {"replies": 0}
    waits.sort()
    return {
        "replies": len(waits),
        "median": round(statistics.median(waits), 1),
        "p90": round(waits[int(0.9 * (len(waits) - 1))], 1),
        "max": round(waits[-1], 1),
    }


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def run(cases: list[str]) -> dict[str, Any]:
    from tests.support.projects import index_project, subprocess_env, write_project
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    work = Path(tempfile.mkdtemp(prefix="gtog-kills-"))
    out: dict[str, Any] = {}
    try:
        with ScriptedServer(rules) as server:
            indexes = {}
            for key in ("lighthouse", "orchard"):
                indexes[key] = write_project(work / key, key, server.base_url)
                index_project(indexes[key])
            server.delay = 0.05
            for case in cases:
                methods, jobs, no_cache, trigger = CASES[case]
                began, load = time.monotonic(), _load()
                pairs = QUESTIONS * len(methods)
                server.clear_log()
                whole = _config(work / case / "whole", indexes, methods)
                cmd = [sys.executable, "-m", "gtog", "eval", "--root", str(whole)]
                cmd += ["-j", str(jobs), "-q"]
                subprocess.run(cmd, env=subprocess_env(), check=True, capture_output=True)
                time.sleep(0.2)
                uninterrupted = len(server.log)
                result: dict[str, Any] = {
                    "methods": list(methods),
                    "pairs": pairs,
                    "jobs": jobs,
                    "even_rounds_kill_when": trigger,
                    "uninterrupted": {
                        "requests": uninterrupted,
                        **_repeats(server.log),
                        "store_latency_ms": _store_latency(server.log, whole / "results" / "cache"),
                    },
                }
                variants = {"with_cache": []}
                if no_cache:
                    variants["without_cache"] = ["--no-cache"]
                for name, extra in variants.items():
                    root = _config(work / case / name, indexes, methods)
                    killed = _killed_run(server, root, pairs, jobs, extra, trigger)
                    ratio = killed["requests"] / uninterrupted
                    floor = (uninterrupted + killed["in_flight_at_kills"]) / uninterrupted
                    result[name] = {
                        **killed,
                        "ratio": round(ratio, 3),
                        "floor_ratio": round(floor, 3),
                    }
                result["load_before_after"] = [load, _load()]
                result["seconds"] = round(time.monotonic() - began)
                out[case] = result
                print(case, json.dumps(result), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_record_flag(parser)
    parser.add_argument(
        "--case", action="append", choices=sorted(CASES), help="run only these cases"
    )
    args = parser.parse_args()
    data = run(args.case or list(CASES))
    path = write_results(RESULTS, data, args.record)
    print(json.dumps(data, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

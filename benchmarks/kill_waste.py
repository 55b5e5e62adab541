"""What twenty `kill -9`s cost: model requests of a killed-and-resumed run against an
uninterrupted one, with the model-call cache and without (`--no-cache`).

Two runs over the two example stories, indexed with real graphrag against the scripted
server (replies after 50 ms), 10 questions, the four judges, `-j 2`:

- `small`: local and basic (20 pairs), the run of tests/integration/eval/test_failsafe.py's
  twenty-kills test, killed with the cache and with `--no-cache`;
- `study`: the example study's five methods, tog (width 2, depth 2), local, basic, global
  and drift (50 pairs), killed with the cache.

Each is killed (SIGKILL) in even rounds as soon as a new request reaches the server (one is
then always in flight), in odd rounds as soon as a record lands, then resumed, until every
pair is done or 20 kills. Every request the server sees is counted, the killed runs'
included; a request is "repeated" when the server saw the same one before (kind, text and
body).

    python benchmarks/kill_waste.py [--record]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "kill_waste.json"


CASES = {"small": ("local", "basic"), "study": ("tog", "local", "basic", "global", "drift")}
QUESTIONS = 10


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


def _killed_run(server: Any, root: Path, pairs: int, extra: list[str]) -> dict[str, Any]:
    from tests.support.projects import subprocess_env

    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    base = [sys.executable, "-m", "gtog", "eval", "--root", str(root), "-j", "2", "-q", *extra]
    server.clear_log()
    kills = 0
    for round_ in range(40):
        if _landed(checkpoint) == pairs or kills == 20:
            break
        before, requests = _landed(checkpoint), len(server.chat_log())
        cmd = base + (["--resume"] if checkpoint.exists() else [])
        proc = subprocess.Popen(
            cmd, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if round_ % 2 == 0 and len(server.chat_log()) > requests:
                break
            if round_ % 2 == 1 and _landed(checkpoint) > before:
                break
            time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=30)
    final = subprocess.run([*base, "--resume"], env=subprocess_env(), capture_output=True)
    if final.returncode != 0:
        raise SystemExit(final.stderr.decode()[-2000:])
    time.sleep(0.2)
    return {"kills": kills, "requests": len(server.log), **_repeats(server.log)}


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


def run() -> dict[str, Any]:
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
            for case, methods in CASES.items():
                pairs = QUESTIONS * len(methods)
                server.clear_log()
                whole = _config(work / case / "whole", indexes, methods)
                cmd = [sys.executable, "-m", "gtog", "eval", "--root", str(whole), "-j", "2"]
                subprocess.run([*cmd, "-q"], env=subprocess_env(), check=True, capture_output=True)
                time.sleep(0.2)
                uninterrupted = len(server.log)
                result: dict[str, Any] = {
                    "methods": list(methods),
                    "pairs": pairs,
                    "uninterrupted": {"requests": uninterrupted, **_repeats(server.log)},
                }
                variants = {"with_cache": []}
                if case == "small":
                    variants["without_cache"] = ["--no-cache"]
                for name, extra in variants.items():
                    root = _config(work / case / name, indexes, methods)
                    killed = _killed_run(server, root, pairs, extra)
                    result[name] = {**killed, "ratio": round(killed["requests"] / uninterrupted, 3)}
                out[case] = result
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_record_flag(parser)
    args = parser.parse_args()
    data = run()
    path = write_results(RESULTS, data, args.record)
    print(json.dumps(data, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""How fast a run with nothing left to do answers: `gtog eval --root DIR` re-invoked on a
finished run, and the commands that read a run (`eval report`, `eval diff`, `eval --plan`).

Starts the scripted OpenAI-compatible server (tests/support), copies the example indexes
(eval/indexes/*) to a temp folder and points them at the server, runs `gtog eval` once over
QUESTIONS questions per index with tog, local and basic and the default judges (the
finished run), then times each command below REPEATS times as a fresh process (as a user
types it; no zygote): the median, min and max of the wall time and of the process's CPU
(user + system, rusage of the child), the 1-minute load before and after, and the requests
the server saw during them (none: nothing left to do makes no model call).

- `rerun`: `gtog eval --root DIR -q` on the finished run (prints "nothing to run");
- `report`: `gtog eval report OUT` (rewrites report.html from the records);
- `diff`: `gtog eval diff OUT OUT`;
- `plan`: `gtog eval --root DIR --plan`;
- `python`: `python -c pass` (the interpreter's own start, for scale).

With `--importtime` it also runs the re-invocation once under `python -X importtime` and
lists the biggest top-level imports (cumulative seconds). `--baseline PATH` also times
another checkout's `gtog` (e.g. `git archive <commit>` unpacked in a temp folder) on the
same finished run, each command alternating with this checkout's, for before/after
figures measured under the same load.

gtog's modules run from their cached bytecode (`__pycache__`, as an installed package's
do; written by the first runs, before the timed ones) unless `--no-bytecode-cache`, which
removes the checkouts' `gtog/**/__pycache__` and sets PYTHONDONTWRITEBYTECODE, as this
project's sessions run (gtog's ~90 modules compiled from source in every process: ~0.2 s
of CPU here; the installed packages keep their bytecode).

    python benchmarks/finished_run.py [--questions 5] [--repeats 5] [--importtime]
        [--baseline PATH] [--no-bytecode-cache] [--label after] [--record]
"""

from __future__ import annotations

import argparse
import json
import os
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

RESULTS = "finished_run.json"
INDEXES = REPO / "eval" / "indexes"
EXAMPLE_QA = REPO / "eval" / "qa_eval.json"
METHODS = ("tog", "local", "basic")


def make_root(work: Path, api_base: str, per_index: int) -> Path:
    """Indexes (copied, retargeted), the first `per_index` example questions of each and
    eval_config.yaml (tog, local, basic; the default metrics and judges)."""
    from tests.support.projects import retarget

    base = json.loads(EXAMPLE_QA.read_text())
    keys = sorted(p.name for p in INDEXES.iterdir() if (p / "settings.yaml").is_file())
    items = []
    for key in keys:
        shutil.copytree(INDEXES / key, work / key, ignore=shutil.ignore_patterns("logs", "cache"))
        retarget(work / key, api_base)
        items += [q for q in base if q["imdb_key"] == key][:per_index]
    (work / "qa.json").write_text(json.dumps(items, indent=1))
    index_lines = "\n".join(f"  {k}: {work / k}" for k in keys)
    (work / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{index_lines}\n"
        f"methods: [{', '.join(METHODS)}]\noutput:\n  dir: results\n"
        "tog_search: {width: 2, depth: 2}\n"
    )
    return work


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Run `cmd` to its end: (wall seconds, its CPU seconds, its stderr). It runs in the
    checkout on `env`'s PYTHONPATH (`python -m` puts the working folder first on sys.path)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=env["PYTHONPATH"], stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{stdout}\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, stderr


def _figures(walls: list[float], cpus: list[float]) -> dict[str, Any]:
    return {
        "wall_s": round(statistics.median(walls), 3),
        "wall_s_range": [round(min(walls), 3), round(max(walls), 3)],
        "cpu_s": round(statistics.median(cpus), 3),
        "cpu_s_range": [round(min(cpus), 3), round(max(cpus), 3)],
    }


def measure(
    cmd: list[str], envs: dict[str, dict[str, str]], repeats: int, server: Any
) -> dict[str, Any]:
    """`cmd` run `repeats` times in each environment (this checkout's, the baseline's),
    alternating, after one untimed run in each (the bytecode cache, the disk cache): wall
    and CPU (median, min, max) per environment, the load, and the requests the server saw
    (none expected)."""
    for env in envs.values():
        timed(cmd, env)
    server.clear_log()
    load_before = os.getloadavg()
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in envs}
    for _ in range(repeats):
        for name, env in envs.items():
            wall, cpu, _ = timed(cmd, env)
            times[name][0].append(wall)
            times[name][1].append(cpu)
    out: dict[str, Any] = _figures(*times["this"])
    if "baseline" in times:
        out["baseline"] = _figures(*times["baseline"])
    return out | {
        "requests": len(server.log),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def biggest_imports(cmd: list[str], env: dict[str, str], top: int = 15) -> list[list[Any]]:
    """The top-level imports (as `-X importtime` nests them) taking most cumulative time."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd[1:]],
        env=env,
        cwd=env["PYTHONPATH"],
        capture_output=True,
        text=True,
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        if not cumulative.strip().isdigit():
            continue
        depth = (len(name) - len(name.lstrip()) - 1) // 2
        rows.append((depth, int(cumulative), name.strip()))
    tops = [(c, n) for d, c, n in rows if d == 0]
    return [[n, round(c / 1e6, 3)] for c, n in sorted(tops, reverse=True)[:top]]


def run(
    per_index: int,
    repeats: int,
    importtime: bool,
    baseline: Path | None = None,
    bytecode: bool = True,
) -> dict[str, Any]:
    from tests.support.projects import subprocess_env
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    work = Path(tempfile.mkdtemp(prefix="gtog-finished-"))
    env = subprocess_env()
    env["PYTHONPATH"] = str(REPO)
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    envs = {"this": env}
    if baseline is not None:
        envs["baseline"] = {**env, "PYTHONPATH": str(baseline.resolve())}
    if not bytecode:
        for checkout in envs.values():
            for cached in Path(checkout["PYTHONPATH"], "gtog").rglob("__pycache__"):
                shutil.rmtree(cached)
    gtog = [sys.executable, "-m", "gtog"]
    try:
        with ScriptedServer(rules, embedding_dims=384) as server:
            root = make_root(work, server.base_url, per_index)
            out = root / "results"
            first_wall, first_cpu, _ = timed([*gtog, "eval", "--root", str(root), "-q"], env)
            summary = json.loads((out / "eval_results_summary.json").read_text())
            pairs = sum(group["n"] for group in summary["by_method"].values())
            for name, checkout in envs.items():
                _, _, said = timed([*gtog, "eval", "--root", str(root), "-q"], checkout)
                if "nothing to run" not in said:
                    raise SystemExit(f"the re-invoked run ({name}) had work to do:\n{said}")
            commands = {
                "rerun": [*gtog, "eval", "--root", str(root), "-q"],
                "report": [*gtog, "eval", "report", str(out)],
                "diff": [*gtog, "eval", "diff", str(out), str(out)],
                "plan": [*gtog, "eval", "--root", str(root), "--plan"],
                "python": [sys.executable, "-c", "pass"],
            }
            data: dict[str, Any] = {
                "pairs": pairs,
                "methods": list(METHODS),
                "questions": len(json.loads((root / "qa.json").read_text())),
                "first_run": {"wall_s": round(first_wall, 2), "cpu_s": round(first_cpu, 2)},
                "repeats": repeats,
                "bytecode": "cached" if "PYTHONDONTWRITEBYTECODE" not in env else "not written",
                "commands": {
                    name: measure(cmd, envs, repeats, server) for name, cmd in commands.items()
                },
            }
            if importtime:
                data["biggest_imports_rerun"] = {
                    name: biggest_imports(commands["rerun"], checkout)
                    for name, checkout in envs.items()
                }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=5, help="questions per index")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--importtime", action="store_true")
    parser.add_argument("--label", default="run", help="the key this run is stored under")
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose gtog is timed alongside"
    )
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as set (gtog compiled from source each time)",
    )
    add_record_flag(parser)
    args = parser.parse_args()
    data = run(
        args.questions, args.repeats, args.importtime, args.baseline, not args.no_bytecode_cache
    )
    data["commit"] = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if args.baseline is not None:
        data["baseline"] = str(args.baseline)
    path = results_path(RESULTS, args.record)
    runs = json.loads(path.read_text()) if path.exists() else {}
    runs[args.label] = data
    path.write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(data, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

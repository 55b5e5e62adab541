"""How long `gtog eval` takes to say what is wrong with its input (goal: under 1 s).

Each case is a fresh `gtog eval` process given a bad input; the time is the wall time from
start to exit (code 2, one line). Bad inputs must be found before graphrag, LiteLLM and
scipy are imported, which take seconds.

    python benchmarks/validation_time.py             # 5 runs per case, median; writes
                                                     # benchmarks/out/validation_time.json
    python benchmarks/validation_time.py --record    # ... and benchmarks/results/
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUNS = 5


def _cases(tmp: Path) -> dict[str, list[str]]:
    bad_yaml = tmp / "yaml"
    bad_yaml.mkdir()
    (bad_yaml / "eval_config.yaml").write_text("dataset: {path: qa.json\nindexes: [")
    missing_key = tmp / "key"
    missing_key.mkdir()
    (missing_key / "eval_config.yaml").write_text("dataset: {path: qa.json}\n")
    bad_method = tmp / "method"
    bad_method.mkdir()
    (bad_method / "eval_config.yaml").write_text(
        "dataset: {path: qa.json}\nindexes: {a: a}\nmethods: [tog, lokal]\n"
    )
    (bad_method / "qa.json").write_text('[{"question": "Who?", "answer": "Ann"}]')
    bad_item = tmp / "item"
    bad_item.mkdir()
    (bad_item / "eval_config.yaml").write_text("dataset: {path: qa.json}\nindexes: {a: a}\n")
    (bad_item / "qa.json").write_text('[{"question": "Who?"}]')
    return {
        "no such --root": ["--root", str(tmp / "missing")],
        "malformed YAML": ["--root", str(bad_yaml)],
        "missing config key": ["--root", str(missing_key)],
        "unknown method": ["--root", str(bad_method)],
        "dataset item without an answer": ["--root", str(bad_item)],
    }


def _time(args: list[str]) -> tuple[float, int, str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "HF_HUB_OFFLINE": "1"}
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "gtog", "eval", *args], capture_output=True, text=True, env=env
    )
    return time.perf_counter() - start, run.returncode, run.stderr.strip()


def main() -> None:
    """Median wall time per case; the results file; `--record` also updates the tracked one."""
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, args in _cases(Path(tmp)).items():
            times, codes, lines = [], set(), set()
            for _ in range(RUNS):
                seconds, code, line = _time(args)
                times.append(seconds)
                codes.add(code)
                lines.add(line.replace(tmp, "TMP"))
            results[name] = {
                "median_s": round(statistics.median(times), 3),
                "max_s": round(max(times), 3),
                "exit_codes": sorted(codes),
                "message": sorted(lines),
            }
            print(f"{name:32} median {statistics.median(times):.2f} s  max {max(times):.2f} s")
    out = {
        "runs_per_case": RUNS,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "cases": results,
    }
    targets = [HERE / "out" / "validation_time.json"]
    if "--record" in sys.argv:
        targets.append(HERE / "results" / "validation_time.json")
    for target in targets:
        target.parent.mkdir(exist_ok=True)
        target.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {target}")


if __name__ == "__main__":
    main()

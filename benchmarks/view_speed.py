"""How fast `gtog eval view` opens a study's pages, and what its memory grows with.

Writes a study of 50 finished runs (40 questions x 2 methods each) and one run of 2,000
records (1,000 questions x tog and basic, with contexts and judge reasons like a real run's),
starts `gtog eval view` on it as a user would (its own process, real HTTP), and times with
httpx: the run list (first and again), the big run's page (first: read and built; again:
from the viewer's cache; filtered), one question, and the progress call a live page makes.
Also the server's resident memory after the list, after the big run, and after opening
every one of the 50 small runs (a few runs' pages are kept, not all).

    python benchmarks/view_speed.py [--record]

Writes benchmarks/out/view_speed.json (with `--record`: benchmarks/results/).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _study(root: Path) -> None:
    from tests.support.runs import verdict_records, write_run

    for i in range(50):
        table = {f"q{j}": {"tog": (i + j) % 2, "basic": (i + j + 1) % 3 // 2} for j in range(40)}
        write_run(root / f"variant-{i:02d}", verdict_records(table))
    table = {f"q{j:04d}": {"tog": j % 2, "basic": (j // 2) % 2} for j in range(1000)}
    index = {q: f"movie-{int(q[1:]) % 20:02d}" for q in table}
    records = verdict_records(table, index)
    for r in records:  # a real run's weight: an answer, its context, the judge's reason
        r.context_text = "-----Entities-----\nid|entity|description\n" + "7|HARBOR|a harbor\n" * 60
        if r.response:
            r.response = r.response + ". " + "The harbor master kept the ledger. " * 8
    write_run(root / "big", records)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _time(client: httpx.Client, url: str) -> float:
    start = time.perf_counter()
    r = client.get(url)
    r.raise_for_status()
    return round(time.perf_counter() - start, 3)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gtog-view-speed-"))
    _study(root)
    size = sum(f.stat().st_size for f in (root / "big").iterdir())
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gtog", "eval", "view", str(root), "--port", str(port)],
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=60) as client:
            while True:
                try:
                    client.get("/favicon.ico")
                    break
                except httpx.HTTPError:
                    time.sleep(0.1)
            result = {
                "runs": 51,
                "big_run_records": 2000,
                "big_run_bytes": size,
                "list_first_s": _time(client, "/"),
                "list_again_s": _time(client, "/"),
                "rss_after_list_mb": round(_rss_mb(proc.pid), 1),
                "big_run_first_s": _time(client, "/run/big"),
                "big_run_again_s": _time(client, "/run/big"),
                "big_run_filtered_s": _time(
                    client, "/run/big?right=tog&wrong=basic&index=movie-03"
                ),
                "question_s": _time(client, "/question/big?id=q0500"),
                "progress_s": _time(client, "/progress/big"),
                "rss_after_big_run_mb": round(_rss_mb(proc.pid), 1),
            }
            for i in range(50):
                client.get(f"/run/variant-{i:02d}").raise_for_status()
            result["rss_after_all_runs_mb"] = round(_rss_mb(proc.pid), 1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    result["cpus"] = os.cpu_count()
    written = write_results("view_speed.json", result, args.record)
    print(json.dumps(result, indent=2))
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

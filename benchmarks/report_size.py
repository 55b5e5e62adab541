"""How big report.html is for the bundled example, and what it is made of.

Runs `scripts/report_example.py` (the bundled example's 10 questions x tog, local, basic
against the scripted test server, four LLM judges and token_recall) unless `--out DIR`
names a finished output folder, then measures its report.html: total and gzipped size,
the SVG charts, the inline style and script, the collapsed contexts (`<pre>`), what one
more answer adds (the page of all questions against the page of the first half, both
rendered from the run's JSON) and the time to build and render the page.

    python benchmarks/report_size.py [--out DIR] [--record]

Writes benchmarks/out/report_size.json (with `--record`: benchmarks/results/).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from recording import add_record_flag, write_results

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RESULTS = "report_size.json"


def _bytes(parts: list[str]) -> int:
    return sum(len(p.encode()) for p in parts)


def measure(out: Path) -> dict:
    """Sizes of `out/report.html` and of pages rendered from `out`'s JSON."""
    from gtog.eval.report._html import render_page
    from gtog.eval.report._page import page_data

    html = (out / "report.html").read_text(encoding="utf-8")
    detailed = json.loads((out / "eval_results_detailed.json").read_text(encoding="utf-8"))
    summary = json.loads((out / "eval_results_summary.json").read_text(encoding="utf-8"))
    results = detailed["results"]
    answers = sum(len(q["methods"]) for q in results)

    render_page(page_data(detailed, summary))  # templates compiled once per process
    start = time.perf_counter()
    full = render_page(page_data(detailed, summary))
    seconds = time.perf_counter() - start
    half = results[: len(results) // 2]
    smaller = render_page(page_data({**detailed, "results": half}, summary))
    half_answers = sum(len(q["methods"]) for q in half)

    style = re.findall(r"<style>(.*?)</style>", html, re.S)
    script = re.findall(r"<script>(.*?)</script>", html, re.S)
    return {
        "questions": len(results),
        "answers": answers,
        "report_bytes": len(html.encode()),
        "gzip_bytes": len(gzip.compress(html.encode(), compresslevel=9)),
        "charts_bytes": _bytes(re.findall(r"<svg class=\"chart\".*?</svg>", html, re.S)),
        "charts": len(re.findall(r"<svg class=\"chart\"", html)),
        "style_bytes": _bytes(style),
        "script_bytes": _bytes(script),
        "contexts_bytes": _bytes(re.findall(r"<pre>.*?</pre>", html, re.S)),
        "bytes_per_answer": round(
            (len(full.encode()) - len(smaller.encode())) / (answers - half_answers)
        ),
        "render_seconds": round(seconds, 3),
    }


def main() -> int:
    """Run (or read) the example, measure its page, write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="a finished output folder to measure")
    add_record_flag(parser)
    args = parser.parse_args()
    out = args.out
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="gtog-report-size-")) / "results"
        proc = subprocess.run(
            [sys.executable, str(REPO / "scripts" / "report_example.py"), "--out", str(out)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(proc.stderr[-3000:], file=sys.stderr)
            return proc.returncode
    result = measure(out)
    written = write_results(RESULTS, result, args.record)
    print(json.dumps(result, indent=2))
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

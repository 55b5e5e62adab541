#!/usr/bin/env python3
"""The terminal output of the recorded offline demo, as today's gtog prints it.

Reads the demo's recorded answers (`benchmarks/results/demo_local.json`, written by
`benchmarks/demo_local.py --record`), summarises them with gtog's own `summarize` and renders
the tables `gtog eval` prints at the end of a run. The README shows the scores table, docs/
getting-started.md all of it, each between `<!-- demo-output:... -->` markers;
tests/unit/docs/test_demo_output.py checks that both match this rendering.

    python scripts/demo_output.py            # print it
    python scripts/demo_output.py --write    # rewrite the blocks in README.md and the docs
"""

from __future__ import annotations

import argparse
import io
import json
import re
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results" / "demo_local.json"
PAGES = {
    "scores": REPO / "README.md",
    "all": REPO / "docs" / "getting-started.md",
    "routing": REPO / "docs" / "tutorials" / "routing.md",
}
"""Which block each page shows: the scores table alone, every table, or the routing line."""


def render(results: Path = RESULTS) -> str:
    """The tables `gtog eval` prints for the recorded demo run (80 columns, no colour)."""
    from rich.console import Console

    from gtog.eval import read_log, summarize
    from gtog.eval.results._inference import Clusters
    from gtog.eval.results._routing import routing_summary
    from gtog.eval.results._table import summary_table

    recorded = json.loads(results.read_text(encoding="utf-8"))
    metadata = recorded["summary"]["metadata"]
    with tempfile.TemporaryDirectory() as tmp:
        detailed = Path(tmp) / "eval_results_detailed.json"
        detailed.write_text(json.dumps({"metadata": metadata, "results": recorded["answers"]}))
        log = read_log(detailed)
    summary = {
        "metadata": metadata,  # the judge's model and the run's status, for the verdict line
        **summarize(log.records, metadata["methods"], metadata["metrics"]),
    }
    routing = routing_summary(
        log.records,
        metadata["methods"],
        metadata["metrics"],
        labels=Clusters.of("index_key").labels(log.records),
    )
    if routing is not None:  # as `gtog eval` adds it (results._views)
        summary["routing"] = routing
    console = Console(width=80, record=True, color_system=None, file=io.StringIO())
    console.print(summary_table(summary, metadata["metrics"]))
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    return "\n".join(lines).strip("\n")


def block(kind: str, text: str) -> str:
    """The part of `text` a page of `kind` shows: `scores` (up to the cost table) or `all`."""
    if kind == "scores":
        text = text.split("\ncost per answer")[0]
    if kind == "routing":  # the routing line, however the terminal wrapped it
        lines = text.split("\n")
        start = next(i for i, line in enumerate(lines) if line.startswith("routing ("))
        end = next(i for i in range(start, len(lines)) if lines[i].endswith("."))
        text = "\n".join(lines[start : end + 1])
    return text


def replace(page: str, kind: str, text: str) -> str:
    """`page` with its demo-output block replaced by `text`."""
    pattern = re.compile(
        r"(<!-- demo-output:begin -->\n```text\n)(?:.*?\n)?(```\n<!-- demo-output:end -->)", re.S
    )
    if not pattern.search(page):
        raise SystemExit("no <!-- demo-output:begin --> block")
    return pattern.sub(lambda m: m.group(1) + block(kind, text) + "\n" + m.group(2), page)


def shown(page: str) -> str | None:
    """The text of `page`'s demo-output block, or None."""
    found = re.search(r"<!-- demo-output:begin -->\n```text\n(?:(.*?)\n)?```\n", page, re.S)
    return (found.group(1) or "") if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the pages' blocks")
    args = parser.parse_args()
    text = render()
    print(text)
    if args.write:
        for kind, path in PAGES.items():
            path.write_text(replace(path.read_text(encoding="utf-8"), kind, text))
            print(f"wrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()

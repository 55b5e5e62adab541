#!/usr/bin/env python
"""Make docs/tog-tree.png from a real run: ToG on one example question, its report's tree.

    python scripts/tog_tree_png.py [--out docs/tog-tree.png]

Runs `gtog eval` (ToG, width 3, depth 2, correctness and f1) on lh-02 of the bundled
example against the scripted test server (tests/support: rule-based answers; the same
setup as scripts/report_example.py), then screenshots the report's "Every question"
section with that question and its exploration tree opened (a copy of report.html with
those `<details>` open and the rest of the page hidden; the page itself is unchanged).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

QUESTION = "lh-02"

HIDE = """<style>
body > header, main > * { display: none !important; }
main > h2#questions, main > details.q { display: block !important; }
</style>"""


def _shot_page(report: str) -> str:
    """The report with the question and its exploration tree open, the rest hidden."""
    page = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", report)
    start = page.rindex("<details", 0, page.index(f">{QUESTION}<"))
    rest = page[start:].replace("<details", "<details open", 1)
    rest = rest.replace('<details class="tree">', '<details class="tree" open>')
    return (page[:start] + rest).replace("</head>", HIDE + "</head>")


def main() -> int:
    """Run the question and write the PNG."""
    from tests.support.browser import find_chromium, screenshot
    from tests.support.projects import retarget, subprocess_env
    from tests.support.scripted_server import ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "tog-tree.png")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gtog-tree-"))
    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    with ScriptedServer(rules, embedding_dims=384) as server:
        shutil.copytree(
            REPO / "eval" / "indexes" / "lighthouse",
            work / "lighthouse",
            ignore=shutil.ignore_patterns("logs", "cache"),
        )
        retarget(work / "lighthouse", server.base_url)
        settings = work / "lighthouse" / "settings.yaml"
        settings.write_text(
            settings.read_text().replace(
                "api_key: gtog-local-no-key", "api_key: ${GTOG_TEST_API_KEY}"
            )
        )
        qa = json.loads((REPO / "eval" / "qa_eval.json").read_text())
        (work / "qa.json").write_text(json.dumps([q for q in qa if q["id"] == QUESTION]))
        (work / "eval_config.yaml").write_text(
            f"dataset: {{path: qa.json}}\nindexes: {{lighthouse: {work / 'lighthouse'}}}\n"
            "methods: [tog]\nmetrics: [correctness, f1]\n"
            f"output: {{dir: {work / 'results'}}}\ntog_search: {{width: 3, depth: 2}}\n"
        )
        proc = subprocess.run(
            [sys.executable, "-m", "gtog", "eval", "--root", str(work), "-q", "--no-cache"],
            env=subprocess_env(),
            text=True,
        )
    if proc.returncode != 0:
        return proc.returncode
    page = work / "shot.html"
    page.write_text(_shot_page((work / "results" / "report.html").read_text()))
    chromium = find_chromium()
    if chromium is None:
        print("no chromium found", file=sys.stderr)
        return 1
    screenshot(chromium, page, args.out.resolve(), size=(1000, 900))
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

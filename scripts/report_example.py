#!/usr/bin/env python
"""Run `gtog eval` on the bundled example against the scripted test server; write its report.

    python scripts/report_example.py [--out DIR] [--screenshot docs/report.png] [--pairwise]

Copies the prebuilt indexes (eval/indexes/*) to a temporary folder, points their models at
the scripted OpenAI-compatible server of the tests (tests/support: rule-based answers, no
network, 384-d hash embeddings to match the committed vector store), runs all three methods
on the ten example questions with the four LLM judges and token_recall, and leaves
report.html and eval_results.csv in the output folder. The answers are the scripted
server's, not a real model's: use it to see the page, not to compare methods.
With `--screenshot` it also takes a full-page screenshot with headless Chromium.
With `--pairwise` the run also judges every pair of methods head to head (two criteria,
A/A checks; a scripted judge that prefers the longer answer) and groups the questions by
their first word (`type`: who, which, ...), so the report has its head-to-head and
results-by-type sections.
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

KEYS = ("lighthouse", "orchard")
PAIRWISE = "You compare two answers to the same question on one criterion."


def longer_answer(prompt: str) -> str:
    """The scripted pairwise judge: the longer answer wins; equal lengths are a tie."""
    m = re.search(r"Answer 1:\n(.*?)\n\nAnswer 2:\n(.*?)\n\nWhich answer", prompt, re.S)
    one, two = (len(m.group(1).strip()), len(m.group(2).strip())) if m else (0, 0)
    if one == two:
        return json.dumps({"winner": 0, "reason": "the two answers are equally long"})
    winner = 1 if one > two else 2
    return json.dumps({"winner": winner, "reason": f"answer {winner} says more"})


def main() -> int:
    """Run the example and print where the report is."""
    from tests.support.projects import retarget, subprocess_env
    from tests.support.scripted_server import Rule, ScriptedServer
    from tests.support.tog_rules import tog_rules
    from tests.support.world import default_rules, judge_rules

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: temp)")
    parser.add_argument("--screenshot", type=Path, default=None, help="PNG to write")
    parser.add_argument("--pairwise", action="store_true", help="judge head to head too")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="gtog-report-"))
    rules = default_rules()
    rules[len(judge_rules()) : len(judge_rules())] = tog_rules()
    if args.pairwise:
        rules.insert(
            0, Rule("pairwise", lambda r: PAIRWISE in r.prompt, lambda r: longer_answer(r.prompt))
        )
    with ScriptedServer(rules, embedding_dims=384) as server:
        for key in KEYS:
            shutil.copytree(
                REPO / "eval" / "indexes" / key,
                work / key,
                ignore=shutil.ignore_patterns("logs", "cache"),
            )
            retarget(work / key, server.base_url)
            text = (work / key / "settings.yaml").read_text()
            (work / key / "settings.yaml").write_text(
                text.replace("api_key: gtog-local-no-key", "api_key: ${GTOG_TEST_API_KEY}")
            )
        qa = json.loads((REPO / "eval" / "qa_eval.json").read_text())
        dataset, extra = "dataset: {path: qa.json}\n", ""
        if args.pairwise:
            for item in qa[:8]:  # the last two without a type: the (none) group
                item["type"] = item["question"].split()[0].lower()
            dataset = "dataset: {path: qa.json, group_by: [type]}\n"
            extra = "pairwise: {criteria: [comprehensiveness, directness], trials: 1}\n"
        (work / "qa.json").write_text(json.dumps(qa))
        out = (args.out or work / "results").resolve()
        (work / "eval_config.yaml").write_text(
            dataset
            + f"indexes: {{lighthouse: {work / 'lighthouse'}, orchard: {work / 'orchard'}}}\n"
            "methods: [tog, local, basic]\n"
            "metrics: [correctness, faithfulness, relevance, completeness, token_recall]\n"
            f"output: {{dir: {out}}}\ntog_search: {{width: 2, depth: 2}}\nconcurrency: 4\n" + extra
        )
        proc = subprocess.run(
            [sys.executable, "-m", "gtog", "eval", "--root", str(work), "-q", "--force"],
            env=subprocess_env(),
            text=True,
        )
    if proc.returncode != 0:
        return proc.returncode
    report = out / "report.html"
    print(f"{report} ({report.stat().st_size} bytes)")
    if args.screenshot:
        from tests.support.browser import find_chromium, screenshot

        chromium = find_chromium()
        if chromium is None:
            print("no chromium found: no screenshot", file=sys.stderr)
            return 1
        screenshot(chromium, report, args.screenshot.resolve())
        print(f"{args.screenshot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

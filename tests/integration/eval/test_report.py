"""report.html and eval_results.csv from real `gtog eval` runs against the scripted server."""

from __future__ import annotations

import html as html_lib
import os
import re
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from tests.integration.eval.helpers import (
    checkpoint_keys,
    load_results,
    make_eval_root,
    start_eval,
)
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer

pytestmark = pytest.mark.integration

MARKUP_ANSWER = '<script>alert("pwned")</script><img src=x onerror="alert(1)"> Maren Holt.'
MARKUP_SHOWN = (
    "&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;"
    "&lt;img src=x onerror=&#34;alert(1)&#34;&gt; Maren Holt."
)


def markup_rule() -> Rule:
    """basic search answers lh-01 with markup (and the right name, so it is judged correct)."""

    def match(r: ChatRequest) -> bool:
        return (
            r.last_user.strip() == "Who keeps the lighthouse on Varn Island?"
            and "---Role---" in r.system
            and "-----Entities-----" not in r.system
        )

    return Rule("search:markup", match, lambda r: MARKUP_ANSWER)


def external_references(html: str) -> list[str]:
    """Anything that would make a browser fetch: URLs, src/href off the page, CSS imports."""
    found = re.findall(r"https?:|//[a-z0-9]", html, re.I)
    found += re.findall(r"\b(?:src|href|action|srcset|poster)\s*=\s*\"(?!#)[^\"]*\"", html)
    found += re.findall(r"url\(|@import|<link\b|<iframe\b|<object\b|<embed\b", html, re.I)
    return found


def test_eval_writes_report_and_csv_with_every_question_and_method(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    llm_server.rules.insert(0, markup_rule())
    root = make_eval_root(tmp_path, example_indexes)
    result = gtog("eval", "--root", str(root), "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    out = root / "results"
    assert f"wrote{out / 'report.html'}" in "".join(result.stderr.split())  # rich wraps lines
    assert any(e.rule == "search:markup" for e in llm_server.chat_log())
    detailed, summary = load_results(root)
    html = (out / "report.html").read_text(encoding="utf-8")

    qids = [q["question_id"] for q in detailed["results"]]
    assert len(qids) == 6
    for qid in qids:
        assert f'id="q-{qid}"' in html
    assert html.count('<details class="q"') == 6
    assert html.count("<h4>local</h4>") == 6 and html.count("<h4>basic</h4>") == 6
    for q in detailed["results"]:
        assert escape(q["question"]) in html  # the page's escaping (markupsafe, as Jinja2)
    assert "local, basic" in html and "lighthouse, orchard" in html

    # the headline is the terminal's: same-question means with their n
    for metric in ("correctness", "faithfulness", "relevance", "completeness"):
        n = summary["by_method"]["local"]["same_questions"]["scored"][metric]
        assert f'<th class="num">{metric} (n = {n})</th>' in html
    same = summary["by_method"]["basic"]["same_questions"]
    n = same["scored"]["correctness"]
    assert f"basic correctness: {same['correctness']:.3f} over the {n} questions" in html
    assert "Secondary: each method over its own answers" in html and "Partial" not in html

    assert external_references(html) == []
    assert MARKUP_SHOWN in html and html_lib.unescape(MARKUP_SHOWN) == MARKUP_ANSWER
    assert "<script>alert" not in html and "<img" not in html
    assert html.count("<script>") == 1  # the page's own filter script

    frame = pd.read_csv(out / "eval_results.csv")
    assert list(frame.columns) == [
        "index_key", "question_id", "method",
        "correctness", "faithfulness", "relevance", "completeness",
        "latency", "llm_calls", "prompt_tokens", "output_tokens", "cost_usd", "route", "error",
        "current",
    ]  # fmt: skip
    assert len(frame) == 12 and frame["current"].all()
    for row in frame.itertuples():
        entry = next(q for q in detailed["results"] if q["question_id"] == row.question_id)
        answer = entry["methods"][row.method]
        assert row.index_key == entry["imdb_key"]
        assert row.correctness == answer["scores"]["correctness"]
        assert row.prompt_tokens == answer["efficiency"]["prompt_tokens"]
        assert row.latency == pytest.approx(answer["efficiency"]["latency"])
        assert pd.isna(row.error)

    # `gtog eval report` rewrites both files for a finished run
    (out / "report.html").unlink()
    (out / "eval_results.csv").unlink()
    again = gtog("eval", "report", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "report.html").read_text(encoding="utf-8").count('<details class="q"') == 6
    assert len(pd.read_csv(out / "eval_results.csv")) == 12
    assert "Partial results" not in (out / "report.html").read_text(encoding="utf-8")

    missing = gtog("eval", "report", str(tmp_path / "nowhere"))
    assert missing.returncode == 2
    assert "nowhere: output folder not found" in missing.stderr


def test_report_on_a_run_that_is_still_going_then_killed(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    out = root / "results"
    checkpoint = out / "eval_checkpoint.jsonl"
    llm_server.delay = 0.6  # 16 pairs take > 16 s: the report is asked for well before the end
    proc = start_eval(root)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and len(checkpoint_keys(checkpoint)) < 3:
            time.sleep(0.05)
        running = gtog("eval", "report", str(out))
        still_running = proc.poll() is None
        html = (out / "report.html").read_text(encoding="utf-8")
        frame = pd.read_csv(out / "eval_results.csv")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert still_running, "the run finished before the report was asked for"
    assert running.returncode == 0, running.stderr
    assert "Partial results" in html
    assert 3 <= len(frame) < 16
    assert f"{len(frame)} (question, method) answers" in html
    assert not (out / "eval_results_summary.json").exists()

    # interrupted for good: the report covers every record that landed
    landed = len(checkpoint_keys(checkpoint))
    after = gtog("eval", "report", str(out))
    assert after.returncode == 0, after.stderr
    assert len(pd.read_csv(out / "eval_results.csv")) == landed
    assert "Partial results" in (out / "report.html").read_text(encoding="utf-8")
    time.sleep(4 * llm_server.delay)  # let the server finish replies the killed run left open

"""`gtog eval view` in real Chromium (Playwright): list two runs, open one, filter it to the
questions tog got wrong and basic right, open a question, compare the two runs; and a real
`gtog eval` running in the background appears and grows on its page without a reload."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest

from tests.integration.eval.helpers import checkpoint_keys, make_eval_root, start_eval
from tests.integration.view.test_view_app import INDEX, TABLE, rows
from tests.support.browser import find_chromium
from tests.support.runs import verdict_records, write_run
from tests.support.scripted_server import ScriptedServer
from tests.support.viewer import chromium_page, serve_view

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        find_chromium() is None and not os.environ.get("CI"),
        reason="chromium is not installed (apt-get install chromium); CI installs it",
    ),
]


def test_list_open_filter_question_and_compare_in_chromium(tmp_path: Path) -> None:
    root = tmp_path / "study"
    write_run(root / "before", verdict_records(TABLE, INDEX))
    after = {q: dict(v) for q, v in TABLE.items()}
    after["q5"]["tog"] = 0
    write_run(root / "after", verdict_records(after, INDEX))
    shots = tmp_path / "shots"
    with serve_view(root) as base, chromium_page() as (page, console):
        page.goto(base + "/")
        assert page.locator("#runs tr[data-run]").count() == 2
        page.screenshot(path=str(shots / "runs.png"))

        page.click("text=before")
        page.wait_for_url(base + "/run/before")
        assert page.locator("tr.qrow").count() == 12
        page.select_option("select[name=wrong]", "tog")  # each change is a new address
        page.wait_for_url(re.compile(r"wrong=tog"))
        page.select_option("select[name=right]", "basic")
        page.wait_for_url(re.compile(r"right=basic"))
        assert rows(page.content()) == [
            ("q1", "tog"),
            ("q1", "basic"),
            ("q3", "tog"),
            ("q3", "basic"),
        ]
        assert page.locator("#shown").inner_text().startswith("4 of 12 answers")
        filtered = page.url
        page.screenshot(path=str(shots / "filtered.png"), full_page=True)

        page.click("tr[data-qid=q3][data-method=basic] a")
        page.wait_for_url(re.compile(r"/question/before\?id=q3"))
        answers = page.locator(".answers .ans")
        assert answers.count() == 2
        assert "basic says yes about q3" in answers.nth(1).inner_text()
        page.screenshot(path=str(shots / "question.png"), full_page=True)
        page.click("#back")  # back to the same filtered list
        page.wait_for_url(filtered)

        page.goto(filtered)  # a deep link opens the same view
        assert len(rows(page.content())) == 4

        page.goto(base + "/compare")
        page.select_option("select[name=a]", "before")
        page.select_option("select[name=b]", "after")
        page.click("#pick button")
        page.wait_for_url(re.compile(r"/compare\?a=before&b=after"))
        flipped = page.locator("a[href^='/question/after']")
        assert flipped.count() >= 1
        page.screenshot(path=str(shots / "compare.png"), full_page=True)
        flipped.first.click()
        page.wait_for_url(re.compile(r"/question/after\?id=q5"))
        assert console == [], console
    for name in ("runs", "filtered", "question", "compare"):
        assert (shots / f"{name}.png").stat().st_size > 10_000, name


def test_a_running_eval_grows_on_its_page_without_a_reload(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    llm_server.delay = 0.4  # one pair at a time, several seconds each: the page sees it grow
    proc = start_eval(root)
    try:
        deadline = time.monotonic() + 120
        while len(checkpoint_keys(checkpoint)) < 1:
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        with serve_view(root) as base, chromium_page() as (page, console):
            page.goto(base + "/")
            assert "s-running" in page.inner_html("#runs")
            page.goto(base + "/run/results")
            assert page.get_attribute("#progress", "data-status") == "running"
            first = page.locator("tr.qrow").count()
            page.evaluate("window.notReloaded = true")
            deadline = time.monotonic() + 90
            while page.locator("tr.qrow").count() <= first:  # the page's own polling
                assert time.monotonic() < deadline, "the page did not grow"
                page.wait_for_timeout(200)
            assert page.evaluate("window.notReloaded === true")  # redrawn in place
            assert re.search(r"\d+ answers", page.inner_text("#counts"))
            assert console == [], console
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        time.sleep(4 * llm_server.delay)  # let the server finish replies left open

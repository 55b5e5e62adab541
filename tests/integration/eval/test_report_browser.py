"""Open a real run's report.html in headless Chromium: no JS error, no empty chart, filters work."""

from __future__ import annotations

import html
import json
import re
import struct
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.integration.eval.test_report import MARKUP_ANSWER, markup_rule
from tests.support.browser import find_chromium, layout_at, load_page, screenshot
from tests.support.projects import gtog
from tests.support.scripted_server import Fail, Rule, ScriptedServer

pytestmark = pytest.mark.integration

CHROMIUM = find_chromium()


class _Charts(HTMLParser):
    """Per `<svg class="chart">`: its label and how many data marks it holds."""

    def __init__(self) -> None:
        super().__init__()
        self.charts: list[tuple[str, int]] = []
        self.imgs = 0
        self.scripts = 0
        self._open: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "img":
            self.imgs += 1
        if tag == "script":
            self.scripts += 1
        if tag == "svg" and a.get("class") == "chart":
            self.charts.append((a.get("aria-label") or "?", 0))
        elif self.charts and "mark" in (a.get("class") or "").split():
            label, n = self.charts[-1]
            self.charts[-1] = (label, n + 1)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_in_headless_chromium(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from tests.support.tog_rules import add_tog_rules

    assert CHROMIUM is not None
    add_tog_rules(llm_server)
    llm_server.rules.insert(0, markup_rule())
    llm_server.rules.insert(
        0,
        Rule(
            "fail:tog-answer",
            lambda r: "(Think-on-Graph answer)" in r.prompt and "Jory Quill" in r.prompt,
            lambda r: Fail(400, "scripted bad request"),
        ),
    )
    root = make_eval_root(
        tmp_path,
        example_indexes,
        methods=("tog", "local", "basic"),
        extra="tog_search:\n  width: 2\n  depth: 2\n"
        "metrics: [correctness, faithfulness, relevance, completeness, token_recall]\n",
    )
    result = gtog("eval", "--root", str(root), "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    detailed, _ = load_results(root)
    failed = [q for q in detailed["results"] if any("error" in e for e in q["methods"].values())]
    assert [q["question_id"] for q in failed] == ["or-03"]
    page = root / "results" / "report.html"

    loaded = load_page(CHROMIUM, page.as_uri())
    assert loaded.console == [], "the page logged to the console (a JS error or a CSP block)"
    assert 'data-ready="1"' in loaded.dom, "the filter script did not run to its end"
    parsed = _Charts()
    parsed.feed(loaded.dom)
    labels = [label for label, _ in parsed.charts]
    # scores, heat, 3 cost (tokens, seconds, USD: gpt-4o-mini has a price), 2 spreads,
    # stages, errors
    assert len(parsed.charts) == 9, labels
    assert all(n > 0 for _, n in parsed.charts), parsed.charts  # no empty chart
    assert parsed.imgs == 0 and parsed.scripts == 1  # the markup answer made no element
    assert "Maren Holt." in loaded.dom and MARKUP_ANSWER not in loaded.dom
    assert re.search(r'id="shown"[^>]*>6 of 6 questions shown<', loaded.dom)

    # the filters run in the browser: preset by the address, counted by the script
    filtered = load_page(CHROMIUM, page.as_uri() + "#failed")
    assert filtered.console == []
    assert re.search(r'id="shown"[^>]*>1 of 6 questions shown<', filtered.dom)
    visible = re.findall(r'<details class="q" id="q-([^"]+)"(?![^>]*hidden)', filtered.dom)
    assert visible == ["or-03"]
    by_index = load_page(CHROMIUM, page.as_uri() + "#index=orchard")
    assert re.search(r'id="shown"[^>]*>3 of 6 questions shown<', by_index.dom)

    png = screenshot(CHROMIUM, page, tmp_path / "report.png")
    assert _png_size(png) == (1280, 2000)
    assert png.stat().st_size > 30_000  # a drawn page, not a blank one

    # what the run found, in one line at the top: the terminal's line under its table
    [line] = map(
        html.unescape, re.findall(r'<p class="verdict" id="verdict">(.*?)</p>', loaded.dom)
    )
    assert line.startswith("Highest correctness: ") and "significantly better" in line
    assert line in " ".join(result.stdout.split())

    # a phone (400 px): the page never scrolls sideways; charts keep their size and
    # scroll in their boxes (their text stays 12 px, not ~7), tables in theirs
    narrow = layout_at(CHROMIUM, page, 400)
    assert narrow.scroll_width <= narrow.client_width, narrow
    assert narrow.chart_scales and min(narrow.chart_scales.values()) > 0.99, narrow
    # the score chart fits whole (no bar cut at 0.75); every box that scrolls says so
    assert not [k for k in narrow.scrolling if k.startswith("Score per method")], narrow
    assert narrow.scrolling and all(narrow.scrolling.values()), narrow.scrolling
    wide = layout_at(CHROMIUM, page, 1280)
    assert wide.scroll_width <= wide.client_width, wide

    # a run that stopped early (metadata.run, from the summary): the banner says how far
    summary_path = root / "results" / "eval_results_summary.json"
    summary = json.loads(summary_path.read_text())
    summary["metadata"]["run"] = {"status": "interrupted", "pairs_done": 18, "pairs_total": 40}
    summary_path.write_text(json.dumps(summary))
    again = gtog("eval", "report", str(root / "results"))
    assert again.returncode == 0, again.stderr
    stopped = load_page(CHROMIUM, page.as_uri())
    assert stopped.console == []
    banner = re.findall(r'<p class="banner">(.*?)</p>', stopped.dom)
    assert len(banner) == 1 and banner[0].startswith("Partial: 18 of 40 pairs (interrupted).")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_report_with_head_to_head_and_groups_in_headless_chromium(tmp_path: Path) -> None:
    """The JSON of a run with pairwise judging and `group_by` (made by results.py from
    records), written to a page by `write_report` and opened as a user would."""
    from gtog._files import write_json_atomic
    from gtog.eval.report._publish import write_report
    from gtog.eval.results._spec import DETAILED_NAME, SUMMARY_NAME
    from tests.unit.eval.test_page_versus import run_json

    assert CHROMIUM is not None
    out = tmp_path / "results"
    detailed, summary = run_json()
    write_json_atomic(out / DETAILED_NAME, detailed)
    write_json_atomic(out / SUMMARY_NAME, summary)
    page, _ = write_report(out)

    loaded = load_page(CHROMIUM, page.as_uri())
    assert loaded.console == [], "the page logged to the console (a JS error or a CSP block)"
    assert 'data-ready="1"' in loaded.dom
    parsed = _Charts()
    parsed.feed(loaded.dom)
    assert parsed.charts and all(n > 0 for _, n in parsed.charts), parsed.charts
    assert parsed.imgs == 0 and parsed.scripts == 1  # the answer and reason holding markup
    assert loaded.dom.count('<table class="matrix">') == 3  # 2 criteria + by type
    assert loaded.dom.count('<details class="pair"') == 10 * 4  # 3 pairs + the A/A checks
    assert re.search(r'id="shown"[^>]*>10 of 10 questions shown<', loaded.dom)

    # the question-type filter runs in the browser, preset by the address
    for address, shown in (("#g0=who", 3), ("#g0=(none)", 4), ("#g0=which&wrong", 3)):
        filtered = load_page(CHROMIUM, page.as_uri() + address)
        assert filtered.console == []
        assert re.search(rf'id="shown"[^>]*>{shown} of 10 questions shown<', filtered.dom)
    visible = re.findall(r'<details class="q" id="q-([^"]+)"(?![^>]*hidden)', filtered.dom)
    assert visible == ["q04", "q05", "q06"]
    malformed = load_page(CHROMIUM, page.as_uri() + "#g0=%E0%A4%A&wrong")  # not UTF-8
    assert malformed.console == [] and 'data-ready="1"' in malformed.dom
    assert re.search(r'id="shown"[^>]*>10 of 10 questions shown<', malformed.dom)

    for width in (1280, 400):
        png = screenshot(CHROMIUM, page, tmp_path / f"report-{width}.png", size=(width, 3000))
        assert _png_size(png) == (width, 3000)
        assert png.stat().st_size > 30_000  # a drawn page, not a blank one

    # a phone (400 px): the score chart fits whole (it was cut at 0.75); the wide tables
    # and charts scroll in their boxes, and each says so (a line, a shadow)
    narrow = layout_at(CHROMIUM, page, 400)
    assert narrow.scroll_width <= narrow.client_width, narrow
    assert "Score per method and metric over the questions every method answered" in (
        narrow.chart_scales
    )
    assert not [k for k in narrow.scrolling if k.startswith("Score per method")], narrow
    assert len(narrow.scrolling) >= 5 and all(narrow.scrolling.values()), narrow.scrolling

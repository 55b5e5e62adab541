"""report.html as rendered from the Jinja2 templates: escaping, CSP, charts, labels, banner."""

from __future__ import annotations

import base64
import hashlib
import html as html_lib
import re
import traceback
from pathlib import Path

import pytest
from jinja2 import UndefinedError

from gtog.eval.report._html import ENVIRONMENT, render_page
from gtog.eval.report._page import page_data
from tests.unit.eval.test_page import METRICS, RECORDS, XSS, rec, run_json

XSS_SHOWN = (
    "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt; Maren"
)


def test_page_escapes_everything_from_the_data_and_references_nothing() -> None:
    records = [r.model_copy(update={"index_key": "<b>beta</b>"}) if r.qid == "b1" else r
               for r in RECORDS]  # fmt: skip
    detailed, summary = run_json(records, current=True)
    detailed["results"][0]["question"] = 'Who? <iframe src="https://evil.example/x">'
    html = render_page(page_data(detailed, summary))
    assert "<script>alert" not in html and "<img" not in html and "<iframe" not in html
    assert "<b>" not in html
    assert XSS_SHOWN in html and html_lib.unescape(XSS_SHOWN) == XSS
    assert "&lt;b&gt;ctx&lt;/b&gt;" in html  # the context too
    heat = re.search(
        r'<svg class="chart"[^>]*aria-label="Mean correctness per index.*?</svg>', html
    )
    assert heat and "&lt;b&gt;beta&lt;/b&gt;" in heat.group(0)  # chart text: escaped too
    assert html.count("<script>") == 1 and html.count("<style>") == 1
    html_without_data = html.replace("https://evil.example/x", "")
    assert not re.search(r"https?:|//[a-z]", html_without_data, re.I)
    assert not re.search(r"\b(src|href)=\"(?!#)", html)  # only in-page links
    assert "@import" not in html and "url(" not in html

    # the Content-Security-Policy allows exactly this page's style and script
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    csp = html_lib.unescape(csp)
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)
    for body in (script, style):
        digest = base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp


def test_page_shows_every_question_method_and_chart() -> None:
    html = render_page(page_data(*run_json()))
    for qid in ("a1", "a2", "b1"):
        assert f'id="q-{qid}"' in html
    assert html.count('<details class="q"') == 3
    assert 'data-disagree="1"' in html and 'data-failed="1"' in html
    charts = re.findall(r'<svg class="chart".*?</svg>', html, re.S)
    assert len(charts) == 8  # scores, heat map, 2 cost panels, 2 spreads, stages, errors
    assert all('class="mark"' in c for c in charts)
    assert "USD unknown" in html and "no paired comparisons" in html
    assert "Reasoning paths (2)" in html and "RateLimitError" in html


def test_page_with_nothing_scored_says_so() -> None:
    records = [rec("x", "k", "local", error="BadRequestError: no")]
    detailed, summary = run_json(records)
    data = page_data(detailed, summary)
    assert data.header.search_failed == 1 and data.header.fully_scored == 0
    html = render_page(data)
    assert "No answer was scored." in html
    assert 'class="mark"' in html  # the errors chart still draws the failure


def _cells(html: str, heading: str) -> list[list[str]]:
    """The rows of the first table after `heading`, as text cells."""
    start = html.index(heading)
    table = html[html.index("<table", start) : html.index("</table>", start)]
    return [
        [html_lib.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd].*?</t[hd]>", r)]
        for r in re.findall(r"<tr>.*?</tr>", table)
    ]


def test_headline_is_labelled_same_question_and_own_answers_secondary() -> None:
    html = render_page(page_data(*run_json(current=True)))
    assert (
        "each method's mean over the questions every method answered and the judge scored "
        "(correctness 2, faithfulness 1, token_recall 2)" in html
    )
    head, tog, local = _cells(html, 'id="scores"')
    assert head == ["method", "correctness (n = 2)", "faithfulness (n = 1)", "token_recall (n = 2)"]
    assert local[0] == "local" and local[3].startswith("0.750")  # same questions: a1, a2
    assert tog[1].startswith("0.500")
    head, tog, local = _cells(html, "Secondary: each method over its own answers")
    assert head == ["method", *METRICS]
    assert local[3].startswith("0.833") and local[3].endswith("(3/3)")
    assert local[2].startswith("0.500") and local[2].endswith("(2/3)")  # a2's judge failed
    assert tog[1].endswith("(2/3)")  # b1's search failed

    bars = re.search(r'<svg class="chart"[^>]*aria-label="Score per method.*?</svg>', html).group(0)
    assert "over the questions every method answered" in bars and ">n = 2</text>" in bars
    assert "local token_recall: 0.750 over the 2 questions every method answered" in bars
    assert "(k) = those questions" in html and ">no common</text>" in html  # beta: tog failed
    _, tog_cost, _ = _cells(html, 'id="cost"')
    assert tog_cost[:2] == ["tog", "0.500"]
    assert "mean correctness over the 2 questions every method answered and the judge" in html


def test_older_summary_is_labelled_own_answers() -> None:
    html = render_page(page_data(*run_json()))
    assert "each method's mean over its own scored answers" in html
    assert "has no same-question means" in html and "Secondary: each method" not in html
    _, tog, _ = _cells(html, 'id="scores"')
    assert tog[1] == "0.500 (2/3)"
    assert "(k) = answers scored" in html


@pytest.mark.parametrize(
    ("run", "partial", "banner"),
    [
        (None, False, None),
        ({"status": "complete", "pairs_done": 6, "pairs_total": 6}, False, None),
        (
            {"status": "interrupted", "pairs_done": 4, "pairs_total": 6},
            False,
            "Partial: 4 of 6 pairs (interrupted). The figures cover only the (question, "
            "method) pairs the run finished.",
        ),
        (
            {"status": "stopped: <b>budget</b> spent", "pairs_done": 5, "pairs_total": 6},
            False,
            "Partial: 5 of 6 pairs (stopped: &lt;b&gt;budget&lt;/b&gt; spent). The figures",
        ),
        (
            {"status": "stopped: judge unreachable"},
            False,
            "Partial (stopped: judge unreachable). The figures",
        ),
        (
            None,
            True,
            "Partial results: rebuilt from the checkpoint of a run that is still going or "
            "was interrupted; the figures cover the 6 answers finished so far.",
        ),
        (
            {"status": "interrupted", "pairs_done": 4, "pairs_total": 6},
            True,
            "Partial: 4 of 6 pairs (interrupted). Partial results: rebuilt from the checkpoint",
        ),
    ],
)
def test_banner_for_runs_that_did_not_complete(run, partial, banner) -> None:
    detailed, summary = run_json(current=True)
    if run is not None:
        summary["metadata"]["run"] = run
    html = render_page(page_data(detailed, summary, partial=partial))
    shown = re.findall(r'<p class="banner">(.*?)</p>', html)
    if banner is None:
        assert shown == []
    else:
        assert len(shown) == 1 and shown[0].startswith(banner), shown


def test_templates_fail_loudly_and_keep_no_layout_whitespace() -> None:
    data = page_data(*run_json(current=True))
    with pytest.raises(UndefinedError):
        ENVIRONMENT.from_string("{{ data.header.no_such_field }}").render(data=data)
    with pytest.raises(UndefinedError, match="'csp' is undefined") as failed:
        ENVIRONMENT.get_template("report.html").render(data=data, h=data.header)
    where = [(f.filename, f.lineno) for f in traceback.extract_tb(failed.value.__traceback__)]
    template = ENVIRONMENT.get_template("report.html").filename
    line = next(i for i, t in enumerate(Path(template).read_text().splitlines(), 1) if "csp" in t)
    assert (template, line) in where  # the error names the template line
    html = render_page(data)
    markup = re.sub(r"<(style|script|pre)>.*?</\1>", "", html, flags=re.S)
    assert "\n" not in markup.strip() and ">  " not in markup  # the templates' indentation
    assert "significant = p (Holm-adjusted where given)" in html  # wrapped text: one space


def test_records_left_out_of_the_summary_are_named_above_the_figures() -> None:
    detailed, summary = run_json(current=True)
    summary["metadata"]["notes"] = [
        "2 answer(s) made with earlier settings are left out (tog 2); they are re-run by "
        "--resume --force"
    ]
    html = render_page(page_data(detailed, summary))
    shown = re.findall(r'<p class="banner">(.*?)</p>', html)
    assert shown == [
        "2 answer(s) made with earlier settings are left out (tog 2); they are re-run by "
        "--resume --force"
    ]


def test_scores_read_alike_and_the_charts_explain_their_marks() -> None:
    detailed, summary = run_json(current=True)
    entry = detailed["results"][0]["methods"]["tog"]
    entry["scores"]["token_recall"] = 6 / 7
    html = render_page(page_data(detailed, summary))
    assert ">0.86<" in html and "0.857143" not in html  # two decimals, as 0.40 beside it
    assert "whiskers from the 10th to the 90th percentile" in html
    heat = re.search(r"<h2[^>]*>Mean \w+ per index.*?</svg>", html, re.S)
    assert heat is not None and ">1<" in heat.group(0) and "1    colour" not in heat.group(0)

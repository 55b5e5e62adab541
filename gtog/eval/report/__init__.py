"""The report: `report.html` (self-contained, server-side SVG charts) and the CSV.

`page` turns the detailed and summary JSON into typed page data (`models`; per-question
pieces in `questions`, head-to-head judging in `versus` with its types in `pairs`, results
by question type in `groups`, tolerant JSON readers in `readers`); `bars` and `scatter`
draw it as SVG (shared frame, axes and colours in `svg`, escaping element builder in
`markup`); `html`
renders the page from the Jinja2 templates in `templates/` (autoescaped, StrictUndefined)
with the inline style and script of `assets/`; `publish.write_report` reads an output folder
(its JSON, or its checkpoint mid-run) and writes `report.html` and `eval_results.csv`
atomically. Headline means are same-question means, as in the terminal table.
"""

from typing import TYPE_CHECKING

from gtog.lazy import lazy_exports

if TYPE_CHECKING:
    from gtog.eval.report.page import page_data
    from gtog.eval.report.pagedata import PageData
    from gtog.eval.report.publish import REPORT_NAME, write_report

_EXPORTS = {
    "PageData": "gtog.eval.report.pagedata",
    "page_data": "gtog.eval.report.page",
    "REPORT_NAME": "gtog.eval.report.publish",
    "write_report": "gtog.eval.report.publish",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["REPORT_NAME", "PageData", "page_data", "write_report"]

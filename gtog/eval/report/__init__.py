"""The report: `report.html` (self-contained, server-side SVG charts) and the CSV.

`page` turns the detailed and summary JSON into typed page data; `charts` draws it as SVG;
`html` renders the page; `publish.write_report` reads an output folder (its JSON, or its
checkpoint mid-run) and writes `report.html` and `eval_results.csv` atomically.
"""

from gtog.eval.report.page import PageData, page_data
from gtog.eval.report.publish import REPORT_NAME, write_report

__all__ = ["REPORT_NAME", "PageData", "page_data", "write_report"]

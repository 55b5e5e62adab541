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


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

"""Results: the typed eval log and everything computed from its records.

`records` (one `MethodRecord` per question and method), `spec` (what a run is) and `log`
(the `EvalLog`, the checkpoint format, `read_log` for any output) are the data; `views`
builds the detailed and summary JSON and the graphrag-eval `qa/` files; `statistics`
holds the intervals and paired tests; `flat` the CSV; `table` the terminal table. All
are pure functions of records; files are written by the run and the report.


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

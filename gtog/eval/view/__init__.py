"""`gtog eval view`: every run under some folders in a browser, live, side by side.

`_catalog` finds the runs and their state, `_runs` loads a run (the report's page data) once
per change, `_rows` is the question list and its filters, `_app` the Starlette app that
serves them with the report's own templates.

Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

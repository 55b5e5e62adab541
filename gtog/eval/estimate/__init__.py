"""`gtog eval --estimate`: what a run will cost before it is paid (`OUTPUT/estimate.json`).

Two bases: *bounds* (no model call: each method's call bound and context budgets, the
judges' and comparisons' calls, the dataset's texts; `bounded`) and *pilot* (K questions
per method run for real, their spend extrapolated; `pilot`). Either way, what the
checkpoint and the model-call cache already hold is counted as `cached` and left out of
the total (`plan`).


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

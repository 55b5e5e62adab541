"""Terminal lines and tables of a run's summary, pure functions of the summary JSON:
`routing` (the routing line under the scores table).


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

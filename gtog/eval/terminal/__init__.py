"""What `gtog eval` prints beside its score table: lines and small tables made from a summary
(pure functions of the summary's JSON, as the report's sections are): `routing` (the routing
line), `calibration`.

Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

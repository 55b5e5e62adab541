"""Question generation from graphrag indexes (`gtog eval generate`).

Local questions from one text unit, global questions from community reports, linked
questions from two text units that share an entity; each with a reference answer, its
evidence (text unit ids and sentences) and 3-6 assertions, checked by a second call,
de-duplicated by embedding similarity and sampled to n per class. The output is gtog's
dataset format (`type` for `dataset.group_by`).


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

"""Failure attribution: did a wrong answer miss the evidence, or find it and answer wrong?

For every answer the correctness judge scored, the evidence counts as **found** when the
question's gold evidence is in what the method retrieved: `evidence_recall` (the share of
the evidence's content words in the answer's context) is at least `threshold` (0.5 unless
`attribution.evidence_threshold` in eval_config.yaml says otherwise). The recorded
`evidence_recall` score is used; without one it is computed from the saved context. A
question without gold evidence, or an answer whose context was not saved, is **unknown**.

Per method: the 2x2 table (found / missed x right / wrong), and the wrong answers split
into `retrieval_failures` (evidence missed), `generation_failures` (evidence found, answer
still wrong) and `unknown`. For ToG (records with an exploration tree) each retrieval
failure also gets the stage where the evidence was lost (`tog_stages`, first that
applies):

- `no_start_entity`: entity linking found no topic entity;
- `answered_without_paths`: no path grew past its topic entity;
- `evidence_pruned`: an entity the gold evidence names was offered as a candidate and
  pruned, and never reached the evidence paths;
- `stopped_early`: the reasoning step said "enough" before the last depth;
- `not_reached`: the walk went on to its last depth (or ran out of edges) without
  meeting the evidence's entities.

A lexical measure cannot tell a paraphrase from a miss, nor evidence that was retrieved
from evidence that was used: see docs/why.md. Pure functions of records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring._lexical import evidence_recall, words

__all__ = [
    "DEFAULT_THRESHOLD",
    "TOG_STAGES",
    "attribution_summary",
    "evidence_found",
    "tog_stage",
]

DEFAULT_THRESHOLD = 0.5
TOG_STAGES = (
    "no_start_entity",
    "answered_without_paths",
    "evidence_pruned",
    "stopped_early",
    "not_reached",
)


def evidence_found(record: MethodRecord, threshold: float) -> bool | None:
    """Whether the record's context holds its gold evidence (None: cannot be told)."""
    if not record.evidence:
        return None
    judged = record.judgements.get("evidence_recall")
    value = judged.score if judged is not None else None
    if value is None and record.context_text:
        value = evidence_recall(record.evidence, record.context_text)
    return None if value is None else float(value) >= threshold


def _named_in(title: str, evidence_words: list[str]) -> bool:
    """Whether the title's words occur, in order and adjacent, in the evidence's words."""
    wanted = words(title)
    n = len(wanted)
    return bool(n) and any(
        evidence_words[i : i + n] == wanted for i in range(len(evidence_words) - n + 1)
    )


def tog_stage(record: MethodRecord) -> str | None:
    """Where a ToG answer lost its evidence (one of `TOG_STAGES`; None: no tree)."""
    tree = record.exploration
    if not tree:
        return None
    start = next((d for d in tree if d.get("depth") == 0), None)
    if start is None or not start.get("candidates"):
        return "no_start_entity"
    if all(len(p.get("entities") or []) <= 1 for p in record.paths or []):
        return "answered_without_paths"
    evidence = words(record.evidence or "")
    reached = {e for p in record.paths or [] for e in p.get("entities") or []}
    pruned = {
        c.get("entity")
        for d in tree
        for c in d.get("candidates") or []
        if not c.get("kept") and c.get("entity") not in reached
    }
    if any(_named_in(str(e), evidence) for e in pruned if e):
        return "evidence_pruned"
    if any(d.get("verdict") == "enough" for d in tree):
        return "stopped_early"
    return "not_reached"


def _method_attribution(records: list[MethodRecord], threshold: float) -> dict[str, Any] | None:
    judged = [
        r
        for r in records
        if r.error is None
        and "correctness" in r.judgements
        and r.judgements["correctness"].score is not None
    ]
    if not judged:
        return None
    table = {"found": {"right": 0, "wrong": 0}, "missed": {"right": 0, "wrong": 0}}
    counts = {"wrong": 0, "retrieval_failures": 0, "generation_failures": 0, "unknown": 0}
    stages = dict.fromkeys(TOG_STAGES, 0)
    traced = False
    for r in judged:
        right = float(r.judgements["correctness"].score) >= 0.5  # type: ignore[arg-type]
        found = evidence_found(r, threshold)
        traced = traced or r.exploration is not None
        if found is not None:
            table["found" if found else "missed"]["right" if right else "wrong"] += 1
        if right:
            continue
        counts["wrong"] += 1
        if found is None:
            counts["unknown"] += 1
        elif found:
            counts["generation_failures"] += 1
        else:
            counts["retrieval_failures"] += 1
            stage = tog_stage(r)
            if stage is not None:
                stages[stage] += 1
    known = counts["retrieval_failures"] + counts["generation_failures"]
    out: dict[str, Any] = {
        **counts,
        "retrieval_share": counts["retrieval_failures"] / known if known else None,
        "generation_share": counts["generation_failures"] / known if known else None,
        "table": table,
        "threshold": threshold,
    }
    if traced:
        out["tog_stages"] = stages
    return out


def attribution_summary(
    records: Iterable[MethodRecord], methods: list[str], threshold: float = DEFAULT_THRESHOLD
) -> dict[str, dict[str, Any]]:
    """method -> its attribution (see the module docstring); methods without any judged
    correctness are left out."""
    records = list(records)
    out = {}
    for method in methods:
        entry = _method_attribution([r for r in records if r.method == method], threshold)
        if entry is not None:
            out[method] = entry
    return out

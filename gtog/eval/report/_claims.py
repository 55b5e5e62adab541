"""The report's view of the `assertions` metric: each answer's assertions, each method's
counts and the assertions it missed. Pure functions of the detailed and summary JSON."""

from __future__ import annotations

from typing import Any

from gtog.eval.report._models import AssertionCheck, AssertionStats
from gtog.eval.report._readers import as_dict, as_int, as_num, as_str

__all__ = ["answer_assertions", "assertion_stats"]


def answer_assertions(entry: dict[str, Any]) -> list[AssertionCheck]:
    """The assertions judged against one answer (a detailed entry's `assertions`)."""
    out = []
    for raw in as_dict(entry.get("assertions")).get("assertions") or []:
        if not isinstance(raw, dict) or as_str(raw.get("assertion")) is None:
            continue
        passed = raw.get("passed")
        out.append(
            AssertionCheck(
                assertion=str(raw["assertion"]),
                passed=passed if isinstance(passed, bool) else None,
                note=as_str(raw.get("error")) or as_str(raw.get("reason")),
            )
        )
    return out


def assertion_stats(summary: dict[str, Any], methods: list[str]) -> list[AssertionStats]:
    """Per method, the summary's `assertions` block (empty when the run scored none)."""
    block = as_dict(summary.get("assertions"))
    out = []
    for method in methods:
        s = as_dict(block.get(method))
        if not s:
            continue
        missed = [
            (str(m.get("question_id", "")), str(m.get("index_key", "")), str(m["assertion"]))
            for m in s.get("missed_assertions") or []
            if isinstance(m, dict) and isinstance(m.get("assertion"), str)
        ]
        out.append(
            AssertionStats(
                method=method,
                answers=as_int(s.get("answers")) or 0,
                assertions=as_int(s.get("assertions")) or 0,
                passed=as_int(s.get("passed")) or 0,
                missed=as_int(s.get("missed")) or 0,
                unscored=as_int(s.get("unscored")) or 0,
                pass_rate=as_num(s.get("pass_rate")),
                all_supported=as_int(s.get("all_supported")) or 0,
                missed_list=missed,
            )
        )
    return out

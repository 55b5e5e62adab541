"""Which assertions each method's answers supported and missed (the `assertions` metric).

Pure functions of records: the per-answer score (the share of the question's assertions
supported) is summarised like every other metric; this adds the counts behind it and the
assertions themselves that each method missed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring._assertions import METRIC

__all__ = ["assertion_summary"]


def _method(records: list[MethodRecord]) -> dict[str, Any]:
    answers = passed = missed = unscored = complete = 0
    lost: list[dict[str, str]] = []
    for r in sorted(records, key=lambda r: (r.index_key, r.qid)):
        j = r.judgements.get(METRIC)
        if r.error is not None or j is None or not j.assertions:
            continue
        answers += 1
        ok = sum(1 for v in j.assertions if v.passed)
        no = [v.assertion for v in j.assertions if v.passed is False]
        passed, missed = passed + ok, missed + len(no)
        unscored += sum(1 for v in j.assertions if v.passed is None)
        complete += int(ok == len(j.assertions))
        lost += [{"question_id": r.qid, "index_key": r.index_key, "assertion": a} for a in no]
    judged = passed + missed
    return {
        "answers": answers,
        "assertions": passed + missed + unscored,
        "passed": passed,
        "missed": missed,
        "unscored": unscored,
        "pass_rate": passed / judged if judged else None,
        "all_supported": complete,
        "missed_assertions": lost,
    }


def assertion_summary(records: Iterable[MethodRecord], methods: list[str]) -> dict[str, Any]:
    """Per method: answers with assertion verdicts, assertions `passed` / `missed` /
    `unscored`, `pass_rate` (passed over judged assertions, pooled over answers),
    `all_supported` (answers that supported every assertion) and `missed_assertions`
    (question id, index key, assertion)."""
    records = list(records)
    return {m: _method([r for r in records if r.method == m]) for m in methods}

"""The error budget stops the run at the failure that spends it (issue 44, item 11): the
failure is counted before its record is written, and `stop` holds every later pair back
(the loop checks it before starting one), so how slow the write is changes nothing."""

from __future__ import annotations

import pytest

from gtog._errors import FatalRunError
from gtog.eval.results._records import MethodRecord
from gtog.eval.run._guard import Guard


def _rec(qid: str, error: str | None) -> MethodRecord:
    r = MethodRecord(qid=qid, index_key="k", question="Q", reference="R", method="basic")
    r.error, r.error_kind = error, "http" if error else None
    return r


def test_the_failure_that_spends_the_budget_sets_stop_and_every_later_observe_raises() -> None:
    guard = Guard(1)
    guard.observe(_rec("q1", None))
    guard.observe(_rec("q1", "bad request"))
    assert guard.stop is None  # one failure: within the budget
    with pytest.raises(FatalRunError, match="error budget spent: 2 searches failed"):
        guard.observe(_rec("q2", "bad request"))
    assert isinstance(guard.stop, FatalRunError)
    with pytest.raises(FatalRunError) as again:  # a record landing later: the same stop
        guard.observe(_rec("q3", None))
    assert again.value is guard.stop and guard.failed == 2

"""The summary's `cost.spent_usd` and the `cost:` line are what the run paid, as
spend.json counts it (issue 44, item 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spend import cost_context, cost_line, run_cost
from gtog.eval.scoring import Judgement


def test_a_limit_stopped_runs_cost_is_what_spend_json_says_it_paid(tmp_path: Path) -> None:
    """The records hold $0.00754; spend.json $0.00768 (a pair the limit stopped part-way
    paid for its search and left no record): the summary and the cost line say 0.00768."""
    r = MethodRecord(qid="q", index_key="k", question="Q", reference="R", method="m", response="A")
    r.judgements["correctness"] = Judgement(score=1, llm_calls=2, cost_usd=0.00754)
    assert run_cost([r], **cost_context(tmp_path))["spent_usd"] == pytest.approx(0.00754)
    (tmp_path / "spend.json").write_text(
        json.dumps({"usd": 0.00768, "calls": 3, "usd_unknown": False, "limit_usd": 0.0075})
    )
    cost = run_cost([r], **cost_context(tmp_path))
    assert cost["spent_usd"] == pytest.approx(0.00768)
    assert cost["recorded_usd"] == pytest.approx(0.00754)
    assert cost_line(cost) == "cost: $0.0077 spent; limit $0.0075"
    (tmp_path / "spend.json").write_text(json.dumps({"usd": 0.001, "usd_unknown": True}))
    assert run_cost([r], **cost_context(tmp_path))["spent_usd"] is None  # a price unknown

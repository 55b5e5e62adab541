"""A metric added through the scoring registry runs like a built-in one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.scripted_server import ScriptedServer


def test_a_registered_scorer_is_in_the_detailed_and_summary_json(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gtog.eval import EvalOptions, run_evaluation
    from gtog.eval.scoring._base import SCORERS, Judgement, ScorerBase

    class NamesMaren(ScorerBase):
        """1 when the answer names Maren, else 0; unscored for an empty answer."""

        name = "names_maren"
        needs = frozenset({"answer"})
        binary = True

        async def score(self, item, answer, context):  # type: ignore[no-untyped-def]
            if not answer.strip():
                return Judgement.unscored("empty answer")
            return Judgement(score=int("maren" in answer.lower()), reason=item.qid)

    monkeypatch.setitem(SCORERS, NamesMaren.name, NamesMaren)
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("local",),
        extra="metrics: [token_recall, names_maren]\n",
    )
    run = run_evaluation(EvalOptions(root=root, index_keys=["lighthouse"], limit=3))
    assert not run.stopped and len(run.done) == 3
    detailed, summary = load_results(root)
    scores = [q["methods"]["local"]["scores"] for q in detailed["results"]]
    assert all(set(s) == {"token_recall", "names_maren"} for s in scores), scores
    reasons = [q["methods"]["local"]["reasons"]["names_maren"] for q in detailed["results"]]
    assert reasons == [q["question_id"] for q in detailed["results"]]
    expected = sum(s["names_maren"] for s in scores) / 3
    by_method = summary["by_method"]["local"]
    assert by_method["names_maren"] == pytest.approx(expected)
    assert by_method["scored"]["names_maren"] == 3
    assert by_method["ci95_method"]["names_maren"] is not None  # a 0/1 metric's interval
    assert summary["metadata"]["metrics"] == ["token_recall", "names_maren"]


def test_an_unknown_metric_names_the_config_and_the_registry(
    example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from gtog._errors import InputError
    from gtog.eval import EvalOptions, prepare

    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("local",),
        extra="metrics: [names_maren]\n",
    )
    with pytest.raises(
        InputError, match=r"eval_config.yaml: metrics.*unknown metric 'names_maren'"
    ):
        prepare(EvalOptions(root=root))

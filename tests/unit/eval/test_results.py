import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._files import write_json_atomic
from gtog.eval.results._log import read_checkpoint
from gtog.eval.results._records import Efficiency, MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec, spec_changes
from gtog.eval.results._summary import summarize
from gtog.eval.results._views import detailed_results
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.scoring import Judgement

METRICS = ["correctness", "faithfulness"]


def rec(qid, key, method, scores=None, error=None, eff=(1.0, 2, 100, 10), judge_error=None):
    r = MethodRecord(qid=qid, index_key=key, question=f"Q{qid}", reference="R", method=method)
    if error:
        r.error = error
        return r
    r.response = "A"
    r.efficiency = Efficiency(
        latency=eff[0], llm_calls=eff[1], prompt_tokens=eff[2], output_tokens=eff[3]
    )
    for m, s in (scores or {}).items():
        r.judgements[m] = Judgement(
            score=s, reason="x", llm_calls=1, prompt_tokens=5, output_tokens=2
        )
    if judge_error:
        r.judgements[judge_error] = Judgement(error="unparseable", llm_calls=2)
    return r


RECORDS = [
    rec("1", "a", "local", {"correctness": 1, "faithfulness": 1}, eff=(1.0, 1, 100, 10)),
    rec("2", "a", "local", {"correctness": 0}, judge_error="faithfulness", eff=(3.0, 1, 300, 30)),
    rec("3", "b", "local", error="SearchFailed: boom"),
    rec("1", "a", "tog", {"correctness": 1, "faithfulness": 0}, eff=(2.0, 7, 700, 70)),
]


def test_summary_means_exclude_errors_and_count_them() -> None:
    s = summarize(RECORDS, ["tog", "local"], METRICS)
    local = s["by_method"]["local"]
    assert local["correctness"] == pytest.approx(0.5)  # 1 and 0; the failed search is left out
    assert local["faithfulness"] == pytest.approx(1.0)  # the judge error is not a 0
    assert local["n"] == 3 and local["search_errors"] == 1
    assert local["scored"] == {"correctness": 2, "faithfulness": 1}
    assert local["judge_errors"] == {"correctness": 0, "faithfulness": 1}
    assert s["by_method"]["tog"]["faithfulness"] == 0.0
    assert list(s["by_method"]) == ["tog", "local"]


def test_summary_by_movie_and_efficiency() -> None:
    s = summarize(RECORDS, ["tog", "local"], METRICS)
    assert s["by_movie"]["a"]["local"]["correctness"] == pytest.approx(0.5)
    assert s["by_movie"]["b"]["local"]["correctness"] is None
    assert s["by_movie"]["b"]["local"]["search_errors"] == 1
    eff = s["efficiency"]["local"]
    assert eff["avg_latency"] == pytest.approx(2.0)
    assert eff["avg_prompt_tokens"] == pytest.approx(200)
    assert eff["avg_output_tokens"] == pytest.approx(20)
    assert eff["avg_llm_calls"] == pytest.approx(1)
    assert eff["n"] == 2
    assert s["efficiency"]["tog"]["avg_llm_calls"] == 7
    assert s["judge_usage"]["local"]["llm_calls"] == 1 + 1 + 1 + 2


def test_detailed_groups_methods_per_question() -> None:
    d = detailed_results(RECORDS, ["tog", "local"], {"m": 1}, keep_intermediate=False)
    assert d["metadata"] == {"m": 1}
    first = d["results"][0]
    assert first["question_id"] == "1" and list(first["methods"]) == ["tog", "local"]
    assert first["methods"]["local"]["scores"] == {"correctness": 1, "faithfulness": 1}
    assert first["methods"]["local"]["efficiency"]["llm_calls"] == 1
    assert "context_text" not in first["methods"]["local"]
    failed = next(q for q in d["results"] if q["question_id"] == "3")
    assert failed["methods"]["local"]["error"] == "SearchFailed: boom"
    second = next(q for q in d["results"] if q["question_id"] == "2")
    assert second["methods"]["local"]["judge_errors"] == {"faithfulness": "unparseable"}


def test_atomic_write_replaces_whole_file(tmp_path: Path) -> None:
    p = tmp_path / "out.json"
    write_json_atomic(p, {"a": 1})
    write_json_atomic(p, {"b": 2})
    assert json.loads(p.read_text()) == {"b": 2}
    assert [x.name for x in tmp_path.iterdir()] == ["out.json"]


FP = EvalSpec(
    dataset=DatasetSpec(path="qa.json", hash="d1", questions=3),
    methods=["tog", "local"],
    judge=JudgeSpec(models={"a": "openai/x@T0"}, prompts="p1", metrics=METRICS),
)


def test_checkpoint_roundtrip_drops_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "cp.jsonl"
    cp = Checkpoint.create(path, FP)
    for r in RECORDS[:2]:
        cp.append(r)
    cp.close()
    with path.open("a") as f:
        f.write('{"qid": "3", "index_key": "b", "meth')  # killed mid-write
    fp, records, intact = read_checkpoint(path)
    assert fp == FP
    assert [r.key for r in records] == [("1", "local"), ("2", "local")]
    cp = Checkpoint.reopen(path, intact, FP)
    cp.append(RECORDS[2])
    cp.close()
    _, records, _ = read_checkpoint(path)
    assert [r.key for r in records] == [("1", "local"), ("2", "local"), ("3", "local")]


def _judge(**update: object) -> EvalSpec:
    return FP.model_copy(update={"judge": FP.judge.model_copy(update=update)})


def test_spec_changes_name_what_changed() -> None:
    assert spec_changes(FP, FP) == []
    changed = FP.model_copy(update={"dataset": FP.dataset.model_copy(update={"hash": "d2"})})
    assert "dataset" in " ".join(spec_changes(FP, changed))
    assert "prompts" in " ".join(spec_changes(FP, _judge(prompts="p2")))
    assert "judge model" in " ".join(spec_changes(FP, _judge(models={"a": "openai/y@T0"})))
    more = _judge(models={"b": "openai/y@T0"})
    assert spec_changes(FP, more) == []  # a new index is not a conflict


def test_not_a_checkpoint(tmp_path: Path) -> None:
    p = tmp_path / "cp.jsonl"
    p.write_text("hello\n")
    with pytest.raises(InputError, match="line 1"):
        read_checkpoint(p)
    with pytest.raises(InputError, match="no checkpoint"):
        read_checkpoint(tmp_path / "none.jsonl")


def test_evidence_in_detailed_reference_and_summary() -> None:
    from gtog.eval.results._views import qa_reference

    records = []
    for qid, key, method, value, evidence in [
        ("1", "a", "local", 0.5, "[1] Maren Holt"),
        ("1", "a", "basic", 1.0, "[1] Maren Holt"),
        ("2", "b", "local", 0.25, "Bram Osk"),
        ("2", "b", "basic", None, "Bram Osk"),  # e.g. no context: unscored
        ("3", "b", "local", None, None),  # no evidence: no judgement at all
    ]:
        r = rec(qid, key, method, {"correctness": 1})
        r.evidence = evidence
        if evidence is not None:
            r.judgements["evidence_recall"] = (
                Judgement(score=value) if value is not None else Judgement(error="no context")
            )
        records.append(r)
    metrics = ["correctness", "evidence_recall"]
    d = detailed_results(records, ["local", "basic"], {}, keep_intermediate=False)
    by_id = {q["question_id"]: q for q in d["results"]}
    assert by_id["1"]["evidence"] == "[1] Maren Holt" and by_id["3"]["evidence"] is None
    assert by_id["2"]["methods"]["basic"]["scores"]["evidence_recall"] is None
    s = summarize(records, ["local", "basic"], metrics)
    assert s["by_method"]["local"]["evidence_recall"] == pytest.approx((0.5 + 0.25) / 2)
    assert s["by_method"]["local"]["scored"]["evidence_recall"] == 2
    assert s["by_method"]["basic"]["evidence_recall"] == pytest.approx(1.0)
    assert s["by_method"]["basic"]["judge_errors"]["evidence_recall"] == 1
    assert s["by_movie"]["b"]["local"]["evidence_recall"] == pytest.approx(0.25)
    assert s["by_movie"]["b"]["basic"]["evidence_recall"] is None
    reference = {q["id"]: q for t in qa_reference(records) for q in t["questions"]}
    assert reference["1"]["reference_context"] == "[1] Maren Holt"
    assert "reference_context" not in reference["3"]

"""Repeated answers (epochs), the A/A check on two answers, and judge panels (issue 34):
pure functions against hand-computed values, and the panel's majority against the scripted
server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from gtog.eval.results._currency import current_records, pair_staleness
from gtog.eval.results._epochs import epoch_summary, reduce_epochs
from gtog.eval.results._flat import flat_frame
from gtog.eval.results._log import read_checkpoint_contents
from gtog.eval.results._panel import add_panel_entries, judge_agreement, judges_summary
from gtog.eval.results._records import MethodRecord, PairRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec, JudgeSpec, PairwiseSpec
from gtog.eval.results._summary import summarize
from gtog.eval.results._views import result_views
from gtog.eval.run._config import load_eval_config
from gtog.eval.run._judge_check import JudgeCase, judge_cases
from gtog.eval.scoring import Judgement, load_prompts
from gtog.eval.scoring._judges import judge_panel
from gtog.eval.scoring._pairwise import PairJudgement
from tests.support.projects import SETTINGS, TEST_API_KEY
from tests.support.scripted_server import Rule, ScriptedServer


def _record(qid: str, method: str, epoch: int, score: float | None, **kw) -> MethodRecord:
    judgements = {} if score is None else {"correctness": Judgement(score=score)}
    return MethodRecord(
        qid=qid,
        index_key="k",
        question=f"question {qid}",
        reference="ref",
        method=method,
        response=kw.pop("response", f"answer {qid} {epoch}"),
        judgements=judgements,
        epoch=epoch,
        **kw,
    )


def _coin(method: str, table: dict[str, list[int | None]]) -> list[MethodRecord]:
    """Records of `method`: question -> each epoch's score (None: the search failed)."""
    return [
        _record(qid, method, e, s) if s is not None else _record(qid, method, e, None, error="x")
        for qid, scores in table.items()
        for e, s in enumerate(scores, start=1)
    ]


def test_epoch_summary_by_hand() -> None:
    records = _coin("m", {"q1": [1, 1, 1], "q2": [0, 0, 0], "q3": [1, 0, 1], "q4": [0, 0, 1]})
    records += [_record("q5", "m", 1, 1), _record("q5", "m", 2, 0)]  # 2 of 3: left out
    e = epoch_summary(records, "correctness", 3)
    assert e == {
        "k": 3,
        "n": 4,
        "mean": pytest.approx((1 + 0 + 2 / 3 + 1 / 3) / 4),
        "pass_at_k": 0.75,
        "pass_hat_k": 0.25,
        "flip_rate": 0.5,
    }
    assert e["pass_hat_k"] <= e["mean"] <= e["pass_at_k"]
    fractions = [
        r.model_copy(update={"judgements": {"token_recall": Judgement(score=0.5)}}) for r in records
    ]
    rates = epoch_summary(fractions, "token_recall", 3)
    assert (rates["n"], rates["mean"], rates["flip_rate"], rates["pass_at_k"]) == (
        4,
        0.5,
        None,
        None,
    )


def test_reduce_epochs_averages_a_question_and_strict_counts_a_failed_search_as_0() -> None:
    records = _coin("m", {"q1": [1, 0, 1], "q2": [None, 1, 0], "q3": [None, None, None]})
    by_q = {r.qid: r for r in reduce_epochs(records)}
    assert by_q["q1"].judgements["correctness"].score == pytest.approx(2 / 3)
    assert by_q["q2"].judgements["correctness"].score == 0.5 and by_q["q2"].error is None
    assert by_q["q2"].response == "answer q2 2"  # the first answered epoch's answer
    assert by_q["q3"].error == "x"  # every search failed
    strict = {r.qid: r for r in reduce_epochs(records, strict=True)}
    assert strict["q2"].judgements["correctness"].score == pytest.approx(1 / 3)
    single = _coin("m", {"q1": [1], "q2": [0]})
    assert reduce_epochs(single) == single  # one answer per question: as it is


def test_summary_means_are_over_questions_and_k1_summaries_do_not_change() -> None:
    coin = _coin("coin", {f"q{i}": s for i, s in enumerate([[1, 0], [1, 1], [0, 1], [0, 0]])})
    steady = _coin("steady", {f"q{i}": [1, 1] for i in range(4)})
    s = summarize(coin + steady, ["coin", "steady"], ["correctness"], epochs=2)
    coin_entry = s["by_method"]["coin"]
    assert coin_entry["n"] == 4 and coin_entry["answers"] == 8
    assert coin_entry["correctness"] == 0.5 and coin_entry["same_questions"]["scored"] == {
        "correctness": 4
    }
    assert coin_entry["epochs"]["correctness"]["flip_rate"] == 0.5
    assert s["by_method"]["steady"]["epochs"]["correctness"]["flip_rate"] == 0.0
    [c] = s["comparisons"]
    assert c["n"] == 4 and c["test"] != "mcnemar_exact"  # means per question, not 0/1
    assert s["efficiency"]["coin"]["searches"] == 8  # cost counts every answer
    votes = {1: [1, 1, 1], 2: [1, 0, 1]}  # judge trials: unanimous on the first answers
    voted = [
        r.model_copy(
            update={"judgements": {"correctness": Judgement(score=1, votes=votes[r.epoch])}}
        )
        for r in steady
    ]
    trials = summarize(voted, ["steady"], ["correctness"], epochs=2)["by_method"]["steady"]
    assert trials["unanimous"] == {"correctness": 0.5}  # per answer, not per question
    first = [r for r in coin + steady if r.epoch == 1]
    plain = summarize(first, ["coin", "steady"], ["correctness"])
    assert (
        "epochs" not in plain["by_method"]["coin"] and "answers" not in plain["by_method"]["coin"]
    )
    assert plain == summarize(first, ["coin", "steady"], ["correctness"], epochs=1)


def test_records_without_an_epoch_read_as_epoch_1_and_k1_records_write_none() -> None:
    old = json.loads(_record("q1", "m", 1, 1).model_dump_json())
    assert "epoch" not in old  # a run without repeats writes what it always did
    again = MethodRecord.model_validate(old)
    assert again.epoch == 1 and again.key == ("q1", "m")
    repeat = _record("q1", "m", 3, 1)
    assert repeat.key == ("q1", "m", 3) and json.loads(repeat.model_dump_json())["epoch"] == 3
    pair = PairRecord(
        qid="q", index_key="k", criterion="c", a="m", b="m", judgement=PairJudgement()
    )
    assert "epoch_a" not in pair.model_dump_json() and "epoch_b" not in pair.model_dump_json()
    aa = pair.model_copy(update={"epoch_b": 2})
    assert json.loads(aa.model_dump_json())["epoch_a"] == 1  # both say which answers


def _spec(epochs: int, pairwise: bool = False) -> EvalSpec:
    return EvalSpec(
        dataset=DatasetSpec(path="qa.json", hash="h", questions=1),
        methods=["m"],
        judge=JudgeSpec(models={"k": "openai/j@T0"}, metrics=["correctness"]),
        epochs=epochs,
        pairwise=PairwiseSpec(criteria={"c": "d"}, pairs=[("m", "m")]) if pairwise else None,
    )


def test_a_checkpoint_with_repeats_reads_back_and_a_lowered_k_leaves_the_extra_out(
    tmp_path: Path,
) -> None:
    judged = _spec(3).judge.digest("k")
    records = [r.model_copy(update={"judged_with": judged}) for r in _coin("m", {"q1": [1, 0, 1]})]
    path = tmp_path / "eval_checkpoint.jsonl"
    header = json.dumps({"type": "header", "spec": _spec(3).model_dump()})
    path.write_text("\n".join([header, *(r.model_dump_json() for r in records)]) + "\n")
    c = read_checkpoint_contents(path)
    assert [r.key for r in c.records] == [("q1", "m"), ("q1", "m", 2), ("q1", "m", 3)]
    currency = current_records(_spec(2), c.records)
    assert [r.epoch for r in currency.records] == [1, 2]
    assert currency.as_dict()["other_epochs"] == {"m": 1}
    assert currency.notes() == [
        "1 repeated answer(s) beyond the run's epochs are left out (m 1); raise epochs to use them"
    ]
    detailed, _ = result_views(_spec(3), c.records, ["m"])
    assert set(detailed["results"][0]["repeats"]) == {"2", "3"}
    frame = flat_frame(detailed)
    assert list(frame["epoch"]) == [1, 2, 3] and list(frame["correctness"]) == [1.0, 0.0, 1.0]


def test_eval_diff_reads_a_run_with_repeats_per_question() -> None:
    from gtog.eval.results._diff import diff_runs
    from gtog.eval.results._log import EvalLog

    def log(epochs: int, table: dict[str, list[int | None]]) -> EvalLog:
        judged = _spec(epochs).judge.digest("k")
        records = [r.model_copy(update={"judged_with": judged}) for r in _coin("m", table)]
        return EvalLog(spec=_spec(epochs), records=records)

    before = log(2, {"q1": [1, 0], "q2": [1, 1], "q3": [0, 0]})
    after = log(1, {"q1": [1], "q2": [0], "q3": [1]})
    d = diff_runs(before, after)
    entry = d["methods"]["m"]["correctness"]
    assert (entry["n"], d["questions"]["common"]) == (3, 3)  # questions, not answers
    assert entry["a"] == pytest.approx((0.5 + 1 + 0) / 3) and entry["b"] == pytest.approx(2 / 3)
    assert entry["to_wrong"] == ["q2"] and entry["to_right"] == ["q3"]


def test_with_repeats_the_aa_check_reads_epochs_1_and_2() -> None:
    one, two = _record("q", "m", 1, 1), _record("q", "m", 2, 1)
    answers = {r.key: r for r in (one, two)}
    from gtog._hashing import stable_hash

    def pair(epoch_b: int, texts: list[str | None]) -> PairRecord:
        return PairRecord(
            qid="q",
            index_key="k",
            criterion="c",
            a="m",
            b="m",
            judgement=PairJudgement(winner="tie"),
            judged_with=_spec(2, True).pairwise_digest("k"),
            answers=stable_hash(texts),
            epoch_b=epoch_b,
        )

    same = pair(1, [one.response, one.response])  # made before the run had repeats
    assert pair_staleness(_spec(2, True), same, answers) == "made on answers 1 and 1, not 1 and 2"
    assert pair_staleness(_spec(1, True), same, answers) is None
    assert pair_staleness(_spec(2, True), pair(2, [one.response, two.response]), answers) is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("epochs: 0\n", "epochs: Input should be greater than or equal to 1"),
        ("judge: {models: [a]}\n", "judge.models: a panel names at least two models"),
        ("judge: {models: [a, b, a]}\n", "judge.models: 'a' is named twice"),
        ("judge: {model: a, models: [b, c]}\n", "judge: give judge.model (one judge)"),
    ],
)
def test_bad_epochs_and_panels_name_the_key(tmp_path: Path, extra: str, message: str) -> None:
    path = tmp_path / "eval_config.yaml"
    path.write_text(f"dataset: {{path: qa.json}}\nindexes: {{k: k}}\n{extra}")
    with pytest.raises(InputError) as info:
        load_eval_config(path)
    assert str(info.value).startswith(f"{path}: {message}")


def _paneled(votes: dict[str, list[int | None]]) -> list[MethodRecord]:
    """One record per answer: model -> each answer's score (None: that model failed)."""
    n = len(next(iter(votes.values())))
    out = []
    for i in range(n):
        panel = {
            m: Judgement(score=v[i]) if v[i] is not None else Judgement(error="failed")
            for m, v in votes.items()
        }
        out.append(
            _record(f"q{i}", "m", 1, None).model_copy(
                update={"judgements": {"correctness": Judgement(score=1, panel=panel)}}
            )
        )
    return out


def test_krippendorff_alpha_by_hand_and_per_model_means() -> None:
    # (1,1) (0,0) (1,0) (1,1): 8 pairable values, 5 ones, 3 zeros, one disagreeing unit:
    # D_o = 2/8, D_e = 2 * 5 * 3 / (8 * 7), alpha = 1 - D_o / D_e = 1 - 7/15 = 0.5333
    records = _paneled({"a": [1, 0, 1, 1], "b": [1, 0, 0, 1]})
    [agreement] = judge_agreement(records, ["correctness"], ["a", "b"]).values()
    assert agreement["krippendorff_alpha"] == pytest.approx(8 / 15)
    assert (agreement["n"], agreement["split"], agreement["models"]) == (4, 1, ["a", "b"])
    contrarian = _paneled({"a": [1, 0, 1, 1], "b": [1, 0, 0, 1], "c": [0, 1, 0, 0]})
    lower = judge_agreement(contrarian, ["correctness"], ["a", "b", "c"])["correctness"]
    assert lower["krippendorff_alpha"] < agreement["krippendorff_alpha"]
    same = _paneled({"a": [1, 1], "b": [1, None]})
    none = judge_agreement(same, ["correctness"], ["a", "b"])["correctness"]
    assert none["krippendorff_alpha"] is None and none["n"] == 1
    assert "every verdict was the same" in none["reason"]
    means = judges_summary(contrarian, ["m"], ["correctness"], ["a", "b", "c"])["m"]
    assert (means["a"]["correctness"], means["c"]["correctness"]) == (0.75, 0.25)
    assert means["b"]["scored"] == {"correctness": 4}
    # a metric the panel did not judge (the assertions metric: the first model alone)
    one = Judgement(score=1)
    mixed = [
        r.model_copy(update={"judgements": {**r.judgements, "completeness": one}}) for r in records
    ]
    summary: dict = {"by_method": {"m": {}}}
    add_panel_entries(summary, mixed, ["correctness", "completeness"], ["a", "b"])
    assert set(summary["judge_agreement"]) == {"correctness"}
    assert summary["by_method"]["m"]["judges"]["a"]["scored"] == {"correctness": 4}


def _model(server: ScriptedServer, name: str):
    from graphrag_llm.completion import create_completion
    from graphrag_llm.config import ModelConfig

    from gtog.llm._models import ChatModel

    config = ModelConfig(
        model_provider="openai", model=name, api_base=server.base_url, api_key=TEST_API_KEY
    )
    return ChatModel(create_completion(config), config, name)


async def test_a_panel_takes_the_strict_majority_of_its_models(llm_server: ScriptedServer) -> None:
    said = {"yes": '{"score": 1, "reason": "right"}', "no": '{"score": 0, "reason": "wrong"}'}
    llm_server.rules.insert(
        0,
        Rule(
            "panel",
            lambda r: "judge if the prediction is correct" in r.prompt,
            lambda r: said.get(str(r.body.get("model")), "I cannot say."),
        ),
    )
    prompts = load_prompts()
    values = {"question": "Q?", "ground_truth": "G", "predicted": "P"}

    async def ask(*names: str) -> Judgement:
        panel = {f"openai/{n}-{i}": _model(llm_server, n) for i, n in enumerate(names)}
        return await judge_panel("correctness", panel, prompts, values)

    two_to_one = await ask("yes", "yes", "no")
    assert (two_to_one.score, two_to_one.reason) == (1, "right")
    assert [v.score for v in two_to_one.panel.values()] == [1, 1, 0]
    assert two_to_one.llm_calls == 3 and two_to_one.prompt_tokens > 0
    tie = await ask("yes", "no", "mute")  # the mute model's reply is asked twice, then fails
    assert tie.score is None and tie.error == "tie: 1 of 2 scored judges said 1, 1 said 0"
    alone = await ask("yes", "mute", "mute")
    assert alone.score is None and alone.error.startswith("no majority: 1 of 3 judges said 1")

    # judge-check asks the same panel: its verdicts are the majority's
    case = JudgeCase("c1", "correctness", 1, values)
    panel = {m: _model(llm_server, said) for m, said in (("a", "yes"), ("b", "no"), ("c", "yes"))}
    [verdict] = await judge_cases([case], panel["a"], prompts, panel=panel)
    assert verdict.score == 1 and [v.score for v in verdict.panel.values()] == [1, 0, 1]


def test_a_litellm_name_of_another_provider_needs_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gtog.eval.run._config import EvalConfig
    from gtog.eval.run._judging import load_judge_panel

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("GTOG_TEST_API_KEY", TEST_API_KEY)
    (tmp_path / "settings.yaml").write_text(SETTINGS.format(api_base="http://127.0.0.1:9", dims=8))
    graphrag = load_graphrag_config(tmp_path)
    config = EvalConfig.model_validate(
        {
            "dataset": {"path": "qa.json"},
            "indexes": {"k": "k"},
            "judge": {"models": ["default_completion_model", "openai/judge-b"]},
        }
    )
    panel = load_judge_panel(config, graphrag, tmp_path / "settings.yaml")
    assert panel is not None and list(panel) == ["default_completion_model", "openai/judge-b"]
    same_provider = panel["openai/judge-b"].config  # the index judge's server and key
    assert (same_provider.model, same_provider.api_base) == ("judge-b", "http://127.0.0.1:9")
    other = config.model_copy(
        update={
            "judge": config.judge.model_copy(
                update={"models": ["default_completion_model", "anthropic/c"]}
            )
        }
    )
    with pytest.raises(InputError, match=r"judge\.models: 'anthropic/c' is not a model id"):
        load_judge_panel(other, graphrag, tmp_path / "settings.yaml")
    unknown = other.model_copy(
        update={"judge": config.judge.model_copy(update={"models": ["nope", "anthropic/c"]})}
    )
    with pytest.raises(InputError, match="'nope' is neither a model id"):
        load_judge_panel(unknown, graphrag, tmp_path / "settings.yaml")


def test_shards_with_repeats_merge_whole_questions_with_every_epoch(tmp_path: Path) -> None:
    from gtog.eval.results._spec import ShardSpec
    from gtog.eval.run._merge import merge_runs
    from gtog.eval.run._shard import SPLIT, shard_of

    spec = _spec(2, pairwise=True)
    judged = spec.judge.digest("k")
    table = {f"q{i}": [i % 2, 1] for i in range(6)}  # q1, q3, q5 flip
    records = [r.model_copy(update={"judged_with": judged}) for r in _coin("m", table)]
    folders = []
    for index in range(2):
        mine = [r for r in records if shard_of(r.qid, 2) == index]
        shard = ShardSpec(index=index, count=2, pairs=len(mine), split=SPLIT)
        folder = tmp_path / f"shard-{index}-of-2"
        folder.mkdir()
        header = json.dumps(
            {"type": "header", "spec": spec.model_copy(update={"shard": shard}).model_dump()}
        )
        lines = [header, *(r.model_dump_json() for r in mine)]
        (folder / "eval_checkpoint.jsonl").write_text("\n".join(lines) + "\n")
        folders.append(folder)
    with pytest.raises(InputError, match="comparison"):  # the A/A checks were never judged
        merge_runs(tmp_path / "refused", folders)
    merged = merge_runs(tmp_path / "merged", folders, partial=True)
    assert merged.missing_comparisons == 6  # one A/A check (epoch 1 against 2) per question
    summary = json.loads(merged.summary.read_text())
    assert summary["metadata"]["run"]["pairs_total"] == 12
    rep = summary["by_method"]["m"]["epochs"]["correctness"]
    assert (rep["n"], rep["flip_rate"], rep["pass_at_k"], rep["pass_hat_k"]) == (6, 0.5, 1.0, 0.5)
    page = (tmp_path / "merged" / "report.html").read_text()
    assert "Repeated answers" in page and "3 question(s) whose verdicts flipped" in page

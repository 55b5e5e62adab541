"""Other benchmarks' question files load as they are (issue 44 item 13): SQuAD, HotpotQA and
GraphRAG-Bench items with several gold answers (the reference metrics take the best match,
the judges see them all); GraphRAG-Bench's `source` mapped to an index key; BenchmarkQED's
AutoQ files (assertions, no reference answer). The fixtures are small files in each
benchmark's own shape (tests/fixtures/benchmarks)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from gtog.eval._dataset import QAItem, dataset_fingerprint, load_dataset
from gtog.eval.scoring import SCORERS
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._judges import load_prompts
from gtog.eval.scoring._score import build_scorers, score_answer
from gtog.llm._models import chat_model_from_config, run_sync
from tests.support.projects import write_project
from tests.support.scripted_server import Rule, ScriptedServer

BENCHMARKS = Path(__file__).resolve().parents[2] / "fixtures" / "benchmarks"


def _score(metric: str, item: QAItem, answer: str) -> float | None:
    scorer = SCORERS[metric](ScoringSetup())
    return asyncio.run(scorer.score(item, answer, None)).score


def test_squad_as_hugging_face_writes_it_keeps_every_gold_answer() -> None:
    items = load_dataset(BENCHMARKS / "squad_hf.jsonl", ["lighthouse"]).items
    first, second = items
    assert first.qid == "5733be284776f41900661182"
    assert first.answers == ("Maren Holt", "Holt")  # the repeated answer once
    assert first.reference == "Maren Holt | Holt" and first.gold == ("Maren Holt", "Holt")
    assert first.evidence is not None and first.evidence.startswith("Maren Holt kept")
    assert second.answers == ("thirty years", "for thirty years")


@pytest.mark.parametrize(
    ("metric", "answer", "expected"),
    [
        ("exact_match", "Holt", 1),  # the second gold answer, exactly
        ("exact_match", "Maren", 0),
        ("f1", "Holt", 1.0),  # against "Holt": 1; against "Maren Holt": 2/3
        ("f1", "the keeper Holt", 2 * (1 / 2) * 1 / (1 / 2 + 1)),
        ("rouge_l", "Holt", 1.0),
        ("token_recall", "It was Holt.", 1.0),
    ],
)
def test_reference_metrics_take_the_best_match_over_the_gold_answers(
    metric: str, answer: str, expected: float
) -> None:
    item = load_dataset(BENCHMARKS / "squad_hf.jsonl", ["lighthouse"]).items[0]
    assert _score(metric, item, answer) == pytest.approx(expected)
    only_first = item.model_copy(update={"answers": None, "reference": "Maren Holt"})
    if expected:  # against the first answer alone, lower: the list is what lifts it
        assert (_score(metric, only_first, answer) or 0) < expected


def test_hotpotqa_reads_its_supporting_facts_as_the_evidence() -> None:
    (item,) = load_dataset(BENCHMARKS / "hotpotqa.json", ["lighthouse"]).items
    assert item.qid == "5a8b57f25542995d1e6f1371"
    assert item.answers == ("Maren Holt", "Holt")
    assert item.evidence == (
        "Maren Holt kept the Grey Point light for thirty years. "
        "She trimmed the wick at dusk and again at midnight."
    )  # the two supporting sentences, not the orchard's distractor paragraph
    (hf,) = load_dataset(BENCHMARKS / "hotpotqa_hf.jsonl", ["lighthouse"]).items
    assert hf.qid == "5a7a06935542990198eaf050" and hf.reference == "Maren Holt"
    assert hf.evidence == item.evidence  # Hugging Face's columns read the same


def test_graphrag_bench_names_its_corpus_in_source_mapped_to_an_index(tmp_path: Path) -> None:
    path = BENCHMARKS / "graphrag_bench_novel.json"
    mapping = {"Novel-30752": "lighthouse", "Novel-11842": "orchard"}
    ds = load_dataset(
        path,
        ["lighthouse", "orchard"],
        group_by=["question_type"],
        index_field="source",
        index_map=mapping,
    )
    first, second = ds.items
    assert [(i.qid, i.index_key) for i in ds.items] == [
        ("Novel-73586", "lighthouse"),
        ("Novel-73587", "orchard"),
    ]
    assert first.answers == ("Maren Holt", "the keeper Maren Holt")
    assert second.answers is None and second.reference == "inland"
    assert first.groups == {"question_type": "Fact Retrieval"}
    assert first.evidence is not None and "midnight" in first.evidence
    # the corpus names as the index keys themselves: no mapping needed
    same = load_dataset(path, ["Novel-30752", "Novel-11842"], index_field="source").items
    assert [i.index_key for i in same] == ["Novel-30752", "Novel-11842"]
    with pytest.raises(InputError) as info:
        load_dataset(path, ["lighthouse", "orchard"], index_field="source")
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: item 1 (id 'Novel-73586'):")
    assert "source 'Novel-30752' is not a key under 'indexes'" in message
    assert "dataset.index_map" in message


def test_autoq_files_load_with_their_assertions_and_no_reference() -> None:
    ds = load_dataset(BENCHMARKS / "autoq_assertions.json", ["lighthouse"])
    (item,) = ds.items
    assert item.qid == "6f1d0c6e-2b8a-4a4e-9d6f-1c2b3a4d5e6f"
    assert item.question.startswith("How did the keepers")
    assert item.reference == "" and item.gold == () and item.answers is None
    assert item.assertions == (
        "The answer states that the wick was trimmed at dusk.",
        "The answer states that the wick was trimmed again at midnight.",
    )
    (warning,) = ds.warnings
    assert "1 of 1 questions have no reference answer" in warning
    (question,) = load_dataset(BENCHMARKS / "autoq_selected_questions.json", ["k"]).items
    assert question.qid == "0b7e2f4a-91c3-4d2e-8a5b-6c7d8e9f0a1b"
    assert question.question == "What routines does the Grey Point keeper follow each day?"
    assert question.assertions == (
        "The answer mentions trimming the wick at dusk.",
        "The answer mentions trimming the wick at midnight.",
    )


def test_a_question_without_a_reference_skips_the_metrics_that_need_one() -> None:
    (item,) = load_dataset(BENCHMARKS / "autoq_assertions.json", ["lighthouse"]).items
    scorers = build_scorers(["token_recall", "exact_match", "f1", "rouge_l"], ScoringSetup())
    assert asyncio.run(score_answer(scorers, item, "The wick at dusk.", None)) == {}


def test_the_folder_search_finds_the_benchmark_files(tmp_path: Path) -> None:
    folder = tmp_path / "eval" / "lighthouse"
    folder.mkdir(parents=True)
    for name in ("squad_hf.jsonl", "hotpotqa.json", "autoq_assertions.json"):
        shutil.copy(BENCHMARKS / name, folder / name)
    (folder / "corpus.json").write_text(json.dumps([{"corpus_name": "x", "context": "text"}]))
    ds = load_dataset(tmp_path / "eval", ["lighthouse"])
    assert len(ds.items) == 4 and {i.index_key for i in ds.items} == {"lighthouse"}


def test_one_answer_keeps_the_fingerprint_a_list_changes_it() -> None:
    one = QAItem(qid="q", index_key="k", question="Q?", reference="A")
    assert dataset_fingerprint([one]) == dataset_fingerprint(
        [QAItem.model_validate({**one.model_dump(), "answers": None})]
    )
    several = one.model_copy(update={"answers": ("A", "B"), "reference": "A | B"})
    assert dataset_fingerprint([several]) != dataset_fingerprint([one])


def test_the_judges_see_every_gold_answer(tmp_path: Path) -> None:
    (item,) = load_dataset(BENCHMARKS / "hotpotqa.json", ["lighthouse"]).items
    seen: list[str] = []

    def verdict(request) -> str:  # type: ignore[no-untyped-def]
        seen.append(request.prompt)
        return json.dumps({"score": 1, "reason": "names the keeper"})

    with ScriptedServer() as server:
        server.rules.append(Rule("judge", lambda r: True, verdict))
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = chat_model_from_config(config, "default_completion_model")
        scorer = SCORERS["correctness"](ScoringSetup(model=model, prompts=load_prompts()))
        judged = run_sync(scorer.score(item, "Holt did.", None))
    assert judged.score == 1
    (prompt,) = seen
    assert 'Ground Truth: any one of these 2 answers is right: "Maren Holt"; "Holt"' in prompt

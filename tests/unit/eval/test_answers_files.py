"""Answers files: other benchmarks' formats, field mappings, and the lines that are errors
(issue 36; issue 31 item 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval._dataset import QAItem
from gtog.eval.run._answers import AnswersFile, load_answers
from gtog.eval.run._config import load_eval_config
from gtog.eval.run._methods import AnswersSource, RunMethod

ITEMS = [
    QAItem(qid="lh-01", index_key="lighthouse", question="Who keeps the light?", reference="Maren"),
    QAItem(qid="lh-02", index_key="lighthouse", question="Which ship?", reference="Grey Heron"),
    QAItem(qid="or-01", index_key="orchard", question="Which ship?", reference="None"),
]


def _load(path: Path, **how: object) -> dict:
    method = RunMethod(
        "mine", None, answers=AnswersSource(path, AnswersFile(path=str(path), **how))
    )
    return load_answers({"mine": method}, ITEMS)


def test_a_graphrag_bench_file_imports_and_states_question_types(tmp_path: Path) -> None:
    path = tmp_path / "predictions.json"
    path.write_text(
        json.dumps(
            [
                {
                    "id": "lh-01",
                    "question": "Who keeps the light?",
                    "source": "Novel-1",
                    "context": ["Maren keeps it.", "She lives there."],
                    "evidence": "",
                    "question_type": "Fact Retrieval",
                    "generated_answer": "Maren Holt",
                    "ground_truth": "Maren",
                },
                {
                    "id": "lh-02",
                    "question": "Which ship?",
                    "question_type": "Complex Reasoning",
                    "generated_answer": "The Grey Heron",
                    "context": "one passage",
                },
            ]
        )
    )
    book = _load(path, format="graphrag-bench")["mine"]
    assert book.unmatched == 0
    one = book.get(ITEMS[0])
    assert one is not None and one.answer == "Maren Holt"
    assert one.context == "Maren keeps it.\n\nShe lives there."
    assert book.groups() == {
        ("lighthouse", "lh-01"): "Fact Retrieval",
        ("lighthouse", "lh-02"): "Complex Reasoning",
    }
    assert one.llm_calls is None and one.cost_usd is None  # not stated: unknown


def test_a_benchmark_qed_file_brings_its_metrics(tmp_path: Path) -> None:
    path = tmp_path / "data_local_answers.json"
    path.write_text(
        json.dumps(
            [
                {
                    "question_id": "lh-01",
                    "question": "Who keeps the light?",
                    "answer": "Maren Holt [Data: Sources (1)]",
                    "metrics": {
                        "time_seconds": 4.9,
                        "input_tokens": 12022,
                        "output_tokens": 46,
                        "llm_calls": 1,
                        "cost": 0.0217,
                    },
                }
            ]
        )
    )
    line = _load(path, format="benchmark-qed")["mine"].get(ITEMS[0])
    assert line is not None
    assert (line.latency, line.prompt_tokens, line.output_tokens, line.llm_calls) == (
        4.9,
        12022,
        46,
        1,
    )
    assert line.cost_usd == 0.0217


def test_fields_map_any_other_shape_and_a_bad_value_names_the_files_key(tmp_path: Path) -> None:
    path = tmp_path / "other.jsonl"
    path.write_text(
        json.dumps({"q": "who keeps  the LIGHT?", "pred": "Maren", "ctx": {"a": "x", "b": "y"}})
        + "\n"
    )
    fields = {"question": "q", "answer": "pred", "context": "ctx"}
    line = _load(path, fields=fields)["mine"].get(ITEMS[0])
    assert line is not None and line.answer == "Maren" and line.context == "x\n\ny"
    path.write_text(json.dumps({"q": "Who keeps the light?", "pred": 3}) + "\n")
    with pytest.raises(InputError, match=r"other.jsonl: line 1: pred: Input should be"):
        _load(path, fields=fields)


def test_a_text_line_without_index_key_for_two_indexes_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"question_id": "lh-01", "answer": "Maren"},
        {"question": "Which ship?", "answer": "The Grey Heron"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(InputError) as info:
        _load(path)
    message = str(info.value)
    assert "mine.jsonl: line 2:" in message and "lighthouse, orchard" in message
    assert "index_key" in message and "\n" not in message
    # with its index_key, the line answers that index's question only
    lines[1]["index_key"] = "orchard"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    book = _load(path)["mine"]
    assert book.get(ITEMS[2]) is not None and book.get(ITEMS[1]) is None


def test_two_lines_answering_one_question_are_an_error_naming_both(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"question_id": "lh-01", "answer": "Maren"},
        {"question_id": "lh-02", "answer": "The Grey Heron"},
        {"question": "who keeps the light?", "index_key": "lighthouse", "answer": "Tobias"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    with pytest.raises(InputError) as info:
        _load(path)
    message = str(info.value)
    assert "mine.jsonl: line 1 and line 3 both answer 'lh-01' of 'lighthouse'" in message
    assert "\n" not in message


GOOD = "dataset: {path: qa.json}\nindexes: {tt1: tt1}\n"


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("answers: {'my answers': a.jsonl}\n", "answers: 'my answers' is not a usable name"),
        ("variants: {'x/y': {method: tog}}\n", "variants: 'x/y' is not a usable name"),
        (
            "http_methods: {'a b': {url: 'http://localhost:1/'}}\n",
            "http_methods: 'a b' is not a usable name",
        ),
        (
            "answers: {mine: {path: a.json, format: ragas}}\n",
            "answers.mine.format: Input should be 'gtog'",
        ),
        ("answers: {mine: {path: a.json, fields: {anwser: pred}}}\n", "unknown field 'anwser'"),
        ("http_methods: {agent: {url: 'localhost:8000'}}\n", "not an http:// or https://"),
    ],
)
def test_bad_names_and_answers_entries_are_one_line(
    tmp_path: Path, extra: str, needle: str
) -> None:
    path = tmp_path / "eval_config.yaml"
    path.write_text(GOOD + extra)
    with pytest.raises(InputError) as info:
        load_eval_config(path)
    message = str(info.value)
    assert str(path) in message and needle in message, message
    assert "\n" not in message


def test_a_line_s_route_is_the_method_a_router_chose(tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    lines = [
        {"question_id": "lh-01", "answer": "Maren", "route": "local"},
        {"question_id": "lh-02", "answer": "The Grey Heron"},
        {"id": "or-01", "pred": "none", "chosen": {"method": "global"}},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines[:2]))
    book = _load(path)["mine"]
    assert book.get(ITEMS[0]).route == "local"  # type: ignore[union-attr]
    assert book.get(ITEMS[1]).route is None  # type: ignore[union-attr]
    mapped = tmp_path / "other.jsonl"
    mapped.write_text(json.dumps(lines[2]))
    how = {"fields": {"question_id": "id", "answer": "pred", "route": "chosen.method"}}
    other = _load(mapped, **how)["mine"]
    assert other.get(ITEMS[2]).route == "global"  # type: ignore[union-attr]

import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval._dataset import dataset_fingerprint, load_dataset, question_id

KEYS = ["tt1", "tt2", "tt5", "tt9", "k"]


def load(path: Path, keys: list[str] = KEYS, **kw):
    return load_dataset(path, keys, **kw).items


def test_shape_a_single_file(tmp_path: Path) -> None:
    p = tmp_path / "qa.json"
    p.write_text(
        json.dumps(
            [
                {"imdb_key": "tt1", "question": "Who?", "answer": "Ann", "id": "q1"},
                {"imdb_key": "tt2", "question": "Where?", "answer": "Rome"},
            ]
        )
    )
    items = load(p)
    assert [i.qid for i in items] == ["q1", question_id("tt2", "Where?")]
    assert items[1].index_key == "tt2" and items[1].reference == "Rome"
    assert items[0].evidence is None


def test_shape_b_folder_of_per_index_files(tmp_path: Path) -> None:
    d = tmp_path / "qa"
    d.mkdir()
    (d / "tt9.json").write_text(
        json.dumps(
            [
                {"question": "Who?", "ground_truth": "Bo", "context": "Bo did it."},
                {
                    "question": "When?",
                    "ground_truth": "1990",
                    "context": ["In 1990.", "Yes."],
                    "qid": 7,
                },
            ]
        )
    )
    items = load(d)
    assert {i.index_key for i in items} == {"tt9"}
    assert items[0].evidence == "Bo did it."
    assert items[1].evidence == "In 1990.\n\nYes."
    assert items[1].qid == "7"


def test_shape_b_single_file_key_from_name(tmp_path: Path) -> None:
    p = tmp_path / "tt5.json"
    p.write_text(json.dumps([{"question": "Q", "ground_truth": "A", "context": "c"}]))
    assert load(p)[0].index_key == "tt5"


def test_question_ids_are_stable() -> None:
    assert question_id("k", "Who? ") == question_id("k", "Who?")
    assert question_id("k", "Who?") != question_id("j", "Who?")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('[{"question": "Q", "reply": "A"}]', "neither dataset shape fits"),
        ('[{"imdb_key": "k", "question": "", "answer": "A"}]', "field 'question'"),
        ('[{"imdb_key": "k", "question": "Q", "answer": 3}]', "field 'answer'"),
        ('[{"imdb_key": "k", "question": "Q", "answer": "A"},', "malformed JSON"),
        ('{"a": 1}', "expected a JSON list"),
        ('["just a string"]', "expected an object"),
        ("[]", "no questions"),
        (
            '[{"id": 1, "imdb_key": "k", "question": "Q", "answer": "A"},'
            ' {"id": 1, "imdb_key": "k", "question": "R", "answer": "B"}]',
            "duplicate question id",
        ),
    ],
)
def test_bad_datasets(tmp_path: Path, content: str, needle: str) -> None:
    p = tmp_path / "qa.json"
    p.write_text(content)
    with pytest.raises(InputError) as info:
        load(p)
    assert str(p) in str(info.value) and needle in str(info.value)


def test_missing_dataset(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load(tmp_path / "missing.json")


def test_fingerprint_changes_with_content(tmp_path: Path) -> None:
    p = tmp_path / "qa.json"
    p.write_text(json.dumps([{"imdb_key": "k", "question": "Q", "answer": "A"}]))
    before = dataset_fingerprint(load(p))
    p.write_text(json.dumps([{"imdb_key": "k", "question": "Q", "answer": "B"}]))
    assert dataset_fingerprint(load(p)) != before

"""Datasets as users keep them: folders per key, qa_<key>.json, repeats, dataset.files."""

import json
import shutil
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval._dataset import load_dataset, question_id

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval_userdata"
EXAMPLE_KEYS = ["lighthouse", "orchard"]


def write(path: Path, items: list[dict] | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(items if isinstance(items, str) else json.dumps(items), encoding="utf-8")
    return path


def qa(question: str = "Q?", answer: str = "A", **extra: str) -> dict:
    return {"question": question, "ground_truth": answer, "context": "E", **extra}


def test_the_fixture_folder_loads_as_it_lies() -> None:
    ds = load_dataset(FIXTURE, EXAMPLE_KEYS)
    assert [f.relative_to(FIXTURE).as_posix() for f in ds.files] == [
        "lighthouse/qa_lighthouse.json",  # qa_<key>.json in folder <key>
        "orchard/orchard.json",  # <key>.json; transcript_info.json is not a QA file
    ]
    assert [i.index_key for i in ds.items] == ["lighthouse"] * 4 + ["orchard"] * 3
    first, repeat = ds.items[0], ds.items[3]
    assert first.question == repeat.question
    assert first.qid == question_id("lighthouse", first.question)
    assert repeat.qid == f"{first.qid}-2"
    assert repeat.reference.startswith("The keeper is Maren Holt")
    assert ds.repeated_questions == 1
    assert len(ds.warnings) == 1 and "\n" not in ds.warnings[0]
    assert "1 repeated question" in ds.warnings[0]
    assert "lighthouse/qa_lighthouse.json item 4 repeats item 1" in ds.warnings[0]
    assert repeat.qid in ds.warnings[0]
    # the evidence is kept as written: markers, curly quotes, leading spaces
    assert ds.items[0].evidence.startswith(" [1] Maren Holt kept")
    assert "“for the light,”" in ds.items[2].evidence
    assert ds.items[5].reference == "Rosa Lorne, Edda’s mother"
    assert all(i.evidence for i in ds.items) and ds.has_evidence


def test_ids_are_stable_across_loads_and_copies(tmp_path: Path) -> None:
    copy = shutil.copytree(FIXTURE, tmp_path / "eval")
    assert [i.qid for i in load_dataset(copy, EXAMPLE_KEYS).items] == [
        i.qid for i in load_dataset(FIXTURE, EXAMPLE_KEYS).items
    ]


def test_third_occurrence_and_repeats_across_files(tmp_path: Path) -> None:
    write(tmp_path / "k" / "a.json", [qa("Same?"), qa("Other?"), qa(" Same? ", "B")])
    write(tmp_path / "k" / "b.json", [qa("Same?", "C")])
    ds = load_dataset(tmp_path, ["k"])
    base = question_id("k", "Same?")
    assert [i.qid for i in ds.items] == [base, question_id("k", "Other?"), f"{base}-2", f"{base}-3"]
    assert ds.repeated_questions == 2
    assert "k/a.json item 3 repeats item 1" in ds.warnings[0]
    assert "k/b.json item 1 repeats k/a.json item 1" in ds.warnings[0]


@pytest.mark.parametrize(
    ("relpath", "item_extra", "keys", "expected"),
    [
        # 1. the item's own field beats everything
        ("tt1/tt2.json", {"imdb_key": "tt3"}, ["tt1", "tt2", "tt3"], "tt3"),
        ("tt1/tt2.json", {"index_key": "tt3"}, ["tt1", "tt2", "tt3"], "tt3"),
        # 2. the folder's name, if configured, beats the file name
        ("tt1/tt2.json", {}, ["tt1", "tt2"], "tt1"),
        # 3. the stem, if configured
        ("movies/tt2.json", {}, ["tt1", "tt2"], "tt2"),
        # 4. the single configured key the stem contains (a longer key wins over its prefix)
        ("movies/qa_tt0443706.json", {}, ["tt0443706", "tt0102798"], "tt0443706"),
        ("movies/qa_tt12.json", {}, ["tt1", "tt12"], "tt12"),
        ("movies/QA_TT7.json", {}, ["tt7", "tt8"], "tt7"),
        # 5. the only configured index
        ("movies/questions.json", {}, ["solo"], "solo"),
    ],
)
def test_key_resolution_order(
    tmp_path: Path, relpath: str, item_extra: dict, keys: list[str], expected: str
) -> None:
    file = write(tmp_path / relpath, [qa(**item_extra)])
    for path in (file, tmp_path):  # the file itself, or a folder above it
        assert load_dataset(path, keys).items[0].index_key == expected


def test_dataset_files_map_keys_explicitly(tmp_path: Path) -> None:
    a = write(tmp_path / "x" / "first.json", [qa("A?")])
    b = write(tmp_path / "x" / "second.jsonl", json.dumps(qa("B?")) + "\n\n")
    ds = load_dataset(None, ["k1", "k2"], files={"k1": a, "k2": b})
    assert [(i.index_key, i.question) for i in ds.items] == [("k1", "A?"), ("k2", "B?")]
    # with a folder too: mapped files are not read twice, the rest is searched
    write(tmp_path / "x" / "k2" / "more.json", [qa("C?")])
    ds = load_dataset(tmp_path / "x", ["k1", "k2"], files={"k1": a, "k2": b})
    assert [(i.index_key, i.question) for i in ds.items] == [
        ("k1", "A?"),
        ("k2", "B?"),
        ("k2", "C?"),
    ]


def test_folder_skips_unkeyed_files_with_a_warning_and_gtogs_own_results(
    tmp_path: Path,
) -> None:
    write(tmp_path / "tt1" / "qa_tt1.json", [qa()])
    write(tmp_path / "tt9" / "qa_tt9.json", [qa()])  # an index not configured (yet)
    results = [{"question_id": "x", "imdb_key": "tt1", "question": "Q", "ground_truth": "A"}]
    write(tmp_path / "old" / "eval_results_detailed.json", {"metadata": {}, "results": results})
    write(tmp_path / "out" / "copy.json", [qa()])
    write(tmp_path / ".hidden" / "tt1.json", [qa()])
    write(tmp_path / "tt1" / "output" / "stats.json", '{"total_runtime": 3.2}')
    ds = load_dataset(tmp_path, ["tt1", "tt2"], exclude=[tmp_path / "out"])
    assert [f.relative_to(tmp_path).as_posix() for f in ds.files] == ["tt1/qa_tt1.json"]
    assert len(ds.warnings) == 1
    assert "skipped 1 QA file" in ds.warnings[0] and "tt9/qa_tt9.json" in ds.warnings[0]


def test_jsonl_wrappers_and_evidence_lists(tmp_path: Path) -> None:
    write(
        tmp_path / "k.json",
        {"questions": [{"question": "Q", "answer": "A", "context": [" one", "two"]}]},
    )
    item = load_dataset(tmp_path / "k.json", ["k"]).items[0]
    assert item.reference == "A" and item.evidence == " one\n\ntwo"


BAD_LAYOUTS = {
    "file naming no key": (
        lambda d: write(d / "misc" / "questions.json", [qa()]),
        [
            "questions.json",
            "cannot tell which index",
            "folder 'misc'",
            "name 'questions'",
            "(tt1, tt2)",
            "dataset.files",
        ],
    ),
    "name contains two keys": (
        lambda d: write(d / "misc" / "tt1_vs_tt2.json", [qa()]),
        ["tt1_vs_tt2.json", "contains several keys (tt1, tt2)"],
    ),
    "folder with no keyed file": (
        lambda d: (write(d / "a" / "x.json", [qa()]), d)[1],
        ["x.json", "cannot tell which index"],
    ),
    "folder without QA files": (
        lambda d: (write(d / "a" / "stats.json", '{"runs": 2}'), d)[1],
        ["no QA files", "1 .json/.jsonl files searched"],
    ),
    "malformed JSON found by the search": (
        lambda d: (write(d / "tt1" / "broken.json", '[{"question": '), d)[1],
        ["broken.json", "malformed JSON", "line 1"],
    ),
    "explicit ids repeated": (
        lambda d: write(d / "tt1.json", [qa("A?", id="q1"), qa("B?", id="q1")]),
        ["tt1.json: item 2: duplicate question id 'q1'"],
    ),
    "question without an answer": (
        lambda d: write(d / "tt1.json", [qa(), {"question": "Q", "context": "E", "id": "q2"}]),
        ["tt1.json: item 2 (id 'q2'): neither dataset shape fits"],
    ),
    "context of the wrong type": (
        lambda d: write(d / "tt1.json", [qa(context=3)]),  # type: ignore[arg-type]
        ["tt1.json: item 1: field 'context'"],
    ),
}


@pytest.mark.parametrize("case", list(BAD_LAYOUTS))
def test_bad_layouts_get_one_line_naming_the_file(tmp_path: Path, case: str) -> None:
    make, needles = BAD_LAYOUTS[case]
    path = make(tmp_path)
    with pytest.raises(InputError) as info:
        load_dataset(path, ["tt1", "tt2"])
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, (needle, message)


def test_dataset_files_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"gone\.json: dataset file for 'tt1' \(dataset.files\)"):
        load_dataset(None, ["tt1"], files={"tt1": tmp_path / "gone.json"})
    f = write(tmp_path / "a.json", [qa(imdb_key="tt2")])
    with pytest.raises(InputError, match=r"a\.json: item 1: imdb_key 'tt2' differs from"):
        load_dataset(None, ["tt1", "tt2"], files={"tt1": f})

"""The user's own QA folder, run as it lies: sub-folders per key, qa_<key>.json, repeats,
gold evidence with [n] markers and curly quotes; evidence_recall; per-method response_type."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gtog.eval.scoring._lexical import evidence_recall
from tests.integration.eval.helpers import search_method
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "eval_userdata"


def make_root(tmp_path: Path, indexes: dict[str, Path], extra: str = "") -> Path:
    """An eval root holding the fixture folder unchanged as `eval/`; results go inside it."""
    root = tmp_path / "evalroot"
    shutil.copytree(FIXTURE, root / "eval")
    index_lines = "\n".join(f"  {k}: {p}" for k, p in indexes.items())
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: eval\nindexes:\n{index_lines}\n"
        f"output:\n  dir: eval/results\nconcurrency: 4\n{extra}"
    )
    return root


def test_user_folder_runs_unchanged_with_evidence(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from tests.support.tog_rules import add_tog_rules

    add_tog_rules(llm_server)
    root = make_root(
        tmp_path,
        example_indexes,
        "methods: [tog, local, basic]\ntog_search: {width: 2, depth: 2}\n"
        "response_type: {tog: One Short Sentence, local: Multiple Paragraphs}\n",
    )
    before = {p.relative_to(root): p.read_bytes() for p in (root / "eval").rglob("*.json")}
    result = gtog("eval", "--root", str(root), "--no-cache", "-q")
    assert result.returncode == 0, result.stderr
    assert "7 questions x 3 methods" in result.stderr
    warning = next(line for line in result.stderr.splitlines() if "warning:" in line)
    assert "1 repeated question kept as separate questions" in warning
    assert "lighthouse/qa_lighthouse.json item 4 repeats item 1" in warning

    out = root / "eval" / "results"
    detailed = json.loads((out / "eval_results_detailed.json").read_text())
    summary = json.loads((out / "eval_results_summary.json").read_text())
    assert detailed["metadata"]["total_questions"] == 7
    assert summary["metadata"]["repeated_questions"] == 1
    assert summary["metadata"]["metrics"][-1] == "evidence_recall"  # on: the data has evidence

    dataset = [
        item
        for name in ("lighthouse/qa_lighthouse.json", "orchard/orchard.json")
        for item in json.loads((FIXTURE / name).read_text())
    ]
    results = detailed["results"]
    assert sorted(q["evidence"] for q in results) == sorted(d["context"] for d in dataset)
    repeated = [q for q in results if q["question"] == dataset[0]["question"]]
    assert sorted(q["question_id"][-2:] for q in repeated)[0] == "-2"
    assert {q["ground_truth"] for q in repeated} == {
        dataset[0]["ground_truth"],
        dataset[3]["ground_truth"],
    }
    values: dict[str, list[float]] = {}
    for q in results:
        assert q["imdb_key"] in ("lighthouse", "orchard")
        for method, entry in q["methods"].items():
            assert entry["response"] and "error" not in entry, (q["question_id"], method)
            expected = evidence_recall(q["evidence"], entry["context_text"])
            assert expected is not None
            assert entry["scores"]["evidence_recall"] == pytest.approx(expected)
            values.setdefault(method, []).append(expected)
    # local and basic put the story's text units in their context: the evidence is there
    assert min(values["basic"]) > 0.5 and min(values["local"]) > 0.5
    for method in ("tog", "local", "basic"):
        group = summary["by_method"][method]
        assert group["scored"]["evidence_recall"] == 7
        assert group["evidence_recall"] == pytest.approx(sum(values[method]) / 7)
        assert set(summary["by_movie"]) == {"lighthouse", "orchard"}
        assert summary["by_movie"]["orchard"][method]["scored"]["evidence_recall"] == 3

    reference = json.loads((out / "qa" / "reference.json").read_text())
    contexts = [q["reference_context"] for t in reference for q in t["questions"]]
    assert sorted(contexts) == sorted(d["context"] for d in dataset)

    # each method answered in its own response type
    chat = llm_server.chat_log()
    local = [e for e in chat if search_method(e) == "local"]
    basic = [e for e in chat if search_method(e) == "basic"]
    answers = [e for e in chat if e.rule == "tog:answer"]
    assert len(local) == len(basic) == 7 and answers
    assert all("Multiple Paragraphs" in e.request["messages"][0]["content"] for e in local)
    assert all("Single Paragraph" in e.request["messages"][0]["content"] for e in basic)
    assert all("Response format: One Short Sentence" in e.prompt for e in answers)

    # the data folder is untouched, and a resume does not read the results as questions
    after = {
        p.relative_to(root): p.read_bytes()
        for p in (root / "eval").rglob("*.json")
        if out not in p.parents
    }
    assert after == before
    again = gtog("eval", "--root", str(root), "--no-cache", "--resume", "-q")
    assert again.returncode == 0, again.stderr
    said = " ".join(again.stderr.split())  # rich wraps long lines
    assert "7 questions x 3 methods (tog, local, basic); 0 to run, 21 already done" in said


def test_graphrag2_project_without_a_key_gets_one_line(
    example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """A graphrag 2.x file is translated (issue 46); one graphrag itself would refuse (no
    api_key) stops the run in one line naming the file, before any question."""
    old = tmp_path / "old_project"
    shutil.copytree(example_indexes["orchard"], old)
    (old / "settings.yaml").write_text(
        "models:\n  default_chat_model:\n    type: openai_chat\n    model: gpt-4o-mini\n"
        "  default_embedding_model:\n    type: openai_embedding\n"
        "    model: text-embedding-3-small\n"
        "local_search:\n  chat_model_id: default_chat_model\n"
    )
    root = make_root(tmp_path, {"lighthouse": example_indexes["lighthouse"], "orchard": old})
    result = gtog("eval", "--root", str(root))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    note, message = lines[0], lines[-1]  # (rich may wrap the note)
    assert note.startswith("note:") and "graphrag 2.x settings read as graphrag 3.3" in note
    assert message.startswith("error:") and sum(x.startswith("error") for x in lines) == 1
    assert f"{old / 'settings.yaml'}: " in message and "api_key" in message
    assert "judge.model" not in message
    assert not (root / "eval" / "results").exists()


def test_a_graphrag_bench_file_with_gold_answer_lists_runs_as_it_lies(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """GraphRAG-Bench's shape (issue 44 item 13): `source` names the corpus, mapped to an
    index key; a list of gold answers, the best match scored."""
    root = tmp_path / "bench"
    root.mkdir()
    item = {
        "id": "Novel-73586",
        "source": "Novel-30752",
        "question": "Who keeps the lighthouse on Varn Island?",
        "answer": ["the keeper of Varn light", "Maren Holt"],
        "question_type": "Fact Retrieval",
        "evidence": ["Maren Holt kept the light on Varn Island."],
        "evidence_relations": "",
    }
    (root / "Novel.json").write_text(json.dumps([item]))
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: Novel.json\n  index_field: source\n"
        f"  index_map: {{Novel-30752: lighthouse}}\n  group_by: [question_type]\n"
        f"indexes:\n  lighthouse: {example_indexes['lighthouse']}\n"
        "methods: [basic]\nmetrics: [token_recall, exact_match, f1]\noutput:\n  dir: results\n"
    )
    result = gtog("eval", "--root", str(root), "-q")
    assert result.returncode == 0, result.stderr
    detailed = json.loads((root / "results" / "eval_results_detailed.json").read_text())
    (q,) = detailed["results"]
    assert (q["question_id"], q["imdb_key"]) == ("Novel-73586", "lighthouse")
    assert q["ground_truth"] == "the keeper of Varn light | Maren Holt"
    answer = q["methods"]["basic"]
    assert "Maren Holt" in answer["response"]
    assert answer["scores"]["token_recall"] == 1.0  # the second gold answer, all there

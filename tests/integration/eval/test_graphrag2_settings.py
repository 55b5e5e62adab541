"""A graphrag 2.x project as users have it evaluates as it lies (issue 46 items 1 and 6).

The project: an index in graphrag 2.x's layout with graphrag 2.x's default init file
(`models:`, `chat_model_id`, `vector_store.default_vector_store` with `db_uri:
output\\lancedb`, the key in `.env`). The eval root: the user's own folder of per-movie QA
files (`eval/tt0097576/tt0097576.json`, `eval/tt0443706/qa_tt0443706.json`) and their
eval_config keys (`output.save_intermediate: false`, `judge.model: null`,
`judge.temperature`). One question per movie.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.graphrag2 import AZURE, DEFAULT_INIT, GEMINI, graphrag2_project
from tests.support.legacy import folder_digest
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import add_tog_rules

pytestmark = pytest.mark.integration

METHODS = ("local", "basic", "tog")


def _user_root(tmp_path: Path, indexes: dict[str, Path]) -> Path:
    """The user's eval folder: one QA file per movie, named as theirs are."""
    root = tmp_path / "evalroot"
    qa = json.loads((Path(__file__).resolve().parents[3] / "eval" / "qa_eval.json").read_text())
    first = {key: next(q for q in qa if q["imdb_key"] == key) for key in ("lighthouse", "orchard")}
    for movie, story, name in (
        ("tt0097576", "lighthouse", "tt0097576.json"),
        ("tt0443706", "orchard", "qa_tt0443706.json"),
    ):
        folder = root / "eval" / movie
        folder.mkdir(parents=True)
        item = first[story]
        entry = {"question": item["question"], "ground_truth": item["answer"], "context": ""}
        (folder / name).write_text(json.dumps([entry], indent=2))
    lines = "\n".join(f"  {k}: {p}" for k, p in indexes.items())
    (root / "eval_config.yaml").write_text(
        f"dataset:\n  path: eval\nindexes:\n{lines}\nmethods: [{', '.join(METHODS)}]\n"
        "tog_search: {width: 2, depth: 2}\n"
        "output:\n  dir: eval/results\n  save_intermediate: false\n"
        "judge:\n  model: null\n  temperature: 0.0\n"
        "metrics: [correctness]\nconcurrency: 4\n"
    )
    return root


def test_a_graphrag2_project_evaluates_unchanged_and_resumes_on_its_migrated_twin(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    add_tog_rules(llm_server)
    project = graphrag2_project(
        example_indexes["lighthouse"], tmp_path / "tt0097576", DEFAULT_INIT, llm_server.base_url
    )
    before = folder_digest(project)
    root = _user_root(tmp_path, {"tt0097576": project, "tt0443706": example_indexes["orchard"]})
    result = gtog("eval", "--root", str(root), "--no-cache")
    assert result.returncode == 0, result.stderr
    assert "2 questions x 3 methods" in " ".join(result.stderr.split())
    notes = [x for x in result.stderr.splitlines() if "graphrag 2.x settings read as" in x]
    assert len(notes) == 1, result.stderr  # once per project, not per stage or question
    assert str(project / "settings.yaml") in notes[0]

    out = root / "eval" / "results"
    detailed = json.loads((out / "eval_results_detailed.json").read_text())
    assert {q["imdb_key"] for q in detailed["results"]} == {"tt0097576", "tt0443706"}
    for q in detailed["results"]:
        for method in METHODS:
            entry = q["methods"][method]
            assert entry.get("error") is None and entry["response"], (method, entry)
            assert "context_text" not in entry  # output.save_intermediate: false
            assert entry["scores"].get("correctness") is not None, entry
    judged = [e for e in llm_server.chat_log() if (e.rule or "").startswith("judge")]
    assert judged and all(e.request.get("temperature") == 0.0 for e in judged)
    assert all(e.request.get("model") == "gpt-4o-mini" for e in judged)  # local_search's
    assert folder_digest(project) == before  # not a byte written, no folder made

    plan = gtog("eval", "prepare", "--root", str(root))  # prepare's plan reads it too
    assert plan.returncode == 0, plan.stderr
    assert "nothing to build: all 2 indexes are complete" in plan.stdout + plan.stderr

    # `settings migrate --check` prints what the run read (eval.log has it)
    check = gtog("settings", "migrate", "--root", str(project), "--check")
    assert check.returncode == 0, check.stderr
    log = (out / "eval.log").read_text()
    assert f"{project / 'settings.yaml'} as read (graphrag 3.3 settings):\n{check.stdout}" in log
    assert folder_digest(project) == before

    # the migrated twin gives the same spec: a resume on it has nothing to do
    twin = tmp_path / "twin"
    shutil.copytree(project, twin)
    (twin / "settings.yaml").write_text(check.stdout)
    config = root / "eval_config.yaml"
    config.write_text(config.read_text().replace(str(project), str(twin)))
    resumed = gtog("eval", "--root", str(root), "--no-cache", "--resume", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert "0 to run, 6 already done" in " ".join(resumed.stderr.split()), resumed.stderr
    assert "graphrag 2.x" not in resumed.stderr


@pytest.mark.parametrize("provider", ["azure", "gemini"])
def test_azure_and_gemini_2x_projects_evaluate_on_their_own_wire(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path, provider: str
) -> None:
    """graphrag 2.x's Azure entries (`azure_openai_chat`, deployment, api_version) and a
    Gemini project (LiteLLM's `gemini`, the `index_schma:` typo, the fork's `tog_search:`)."""
    add_tog_rules(llm_server)
    text, base = (
        (AZURE, llm_server.azure_base) if provider == "azure" else (GEMINI, llm_server.gemini_base)
    )
    project = graphrag2_project(example_indexes["lighthouse"], tmp_path / "p", text, base)
    before = folder_digest(project)
    root = _user_root(tmp_path, {"tt0097576": project})
    estimate = gtog("eval", "--root", str(root), "--estimate", "-q")  # bounds, no model call
    assert estimate.returncode == 0, estimate.stderr
    assert llm_server.log == []
    bounds = json.loads((root / "eval" / "results" / "estimate.json").read_text())
    assert set(bounds["methods"]) == set(METHODS)
    result = gtog("eval", "--root", str(root), "--no-cache", "-q")
    assert result.returncode == 0, result.stderr
    detailed = json.loads((root / "eval" / "results" / "eval_results_detailed.json").read_text())
    [question] = detailed["results"]
    for method in METHODS:
        entry = question["methods"][method]
        assert entry.get("error") is None and entry["response"], (method, entry)
        assert entry["scores"].get("correctness") is not None, entry
    assert llm_server.log and {e.wire for e in llm_server.log} == {provider}
    said = " ".join(result.stderr.split())
    assert "graphrag 2.x settings read as graphrag 3.3" in said
    if provider == "gemini":
        assert (
            "ignored by graphrag 2.x itself: vector_store.default_vector_store.index_schma" in said
        )
        assert "num_retain_entity not used" in said  # the fork's block, read
    check = gtog("settings", "migrate", "--root", str(project), "--check")
    log = (root / "eval" / "results" / "eval.log").read_text()
    assert check.returncode == 0 and f"(graphrag 3.3 settings):\n{check.stdout}" in log
    assert folder_digest(project) == before

"""`gtog qa-eval` and `gtog answer-correctness` through a fresh typer app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
import yaml
from click.testing import Result
from typer.testing import CliRunner

from gtog.cli._qa import register

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"


@pytest.fixture
def app() -> typer.Typer:
    app = typer.Typer()
    register(app)
    return app


def qa_eval(app: typer.Typer, reference: Path, responses: Path, out: Path, *extra: str) -> Result:
    """Invoke `gtog qa-eval --reference R --responses S -o OUT [extra...]`."""
    args = ["qa-eval", "--reference", str(reference), "--responses", str(responses)]
    return CliRunner().invoke(app, [*args, "-o", str(out), *extra])


def test_qa_eval_writes_results_and_aggregates(app: typer.Typer, tmp_path: Path) -> None:
    out, agg = tmp_path / "results.yaml", tmp_path / "aggregates.json"
    result = qa_eval(
        app,
        FIXTURES / "seed_reference.yaml",
        FIXTURES / "responses.json",
        out,
        "--aggregates",
        str(agg),
    )
    assert result.exit_code == 0, result.output
    results = yaml.safe_load(out.read_text())
    assert [r["status"] for r in results] == ["success", "error", "success", "error"]
    aggregates = json.loads(agg.read_text())
    assert aggregates["micro"]["steps_score"]["mean"] == 1.0
    assert "steps_score" in result.output


def test_qa_eval_bad_structure_exits_2_and_keeps_existing_output(
    app: typer.Typer, tmp_path: Path
) -> None:
    reference = yaml.safe_load((FIXTURES / "seed_reference.yaml").read_text())
    del reference[1]["questions"][0]["id"]
    bad = tmp_path / "ref.yaml"
    bad.write_text(yaml.safe_dump(reference))
    out = tmp_path / "results.json"
    out.write_text("previous")
    result = qa_eval(app, bad, FIXTURES / "responses.json", out)
    assert result.exit_code == 2
    assert f"{bad}: [1].questions[0].id: required" in " ".join(result.output.split())
    assert out.read_text() == "previous"


def test_qa_eval_bad_item_is_that_questions_error(app: typer.Typer, tmp_path: Path) -> None:
    reference = yaml.safe_load((FIXTURES / "seed_reference.yaml").read_text())
    del reference[1]["questions"][0]["question_text"]
    bad = tmp_path / "ref.yaml"
    bad.write_text(yaml.safe_dump(reference))
    out = tmp_path / "results.json"
    result = qa_eval(app, bad, FIXTURES / "responses.json", out)
    assert result.exit_code == 0, result.output
    message = f"{bad}: [1].questions[0].question_text: required string"
    assert message in " ".join(result.output.split())
    [record] = [r for r in json.loads(out.read_text()) if r["question_id"].startswith("d566")]
    assert record["status"] == "error" and message in record["error"]


def test_qa_eval_semantics_option(app: typer.Typer, tmp_path: Path) -> None:
    out, agg = tmp_path / "results.json", tmp_path / "aggregates.json"
    result = qa_eval(
        app,
        FIXTURES / "ge6_shapes_reference.yaml",
        FIXTURES / "ge6_shapes_responses.yaml",
        out,
        "--aggregates",
        str(agg),
        "--semantics",
        "graphrag-eval-6",
    )
    assert result.exit_code == 0, result.output
    assert json.loads(agg.read_text())["micro"]["steps_score"]["mean"] == 0.8
    assert "graphrag-eval-6" in result.output
    result = qa_eval(
        app, FIXTURES / "seed_reference.yaml", FIXTURES / "responses.json", out, "--semantics", "v5"
    )
    assert result.exit_code == 2 and "--semantics" in result.output


def test_qa_eval_graphrag_eval_6_accepts_what_it_accepts(
    app: typer.Typer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Repeated ids and an empty template id pass (6.6.1 takes them); a question it would
    raise on gets an error record and a warning; no judge from OPENAI_API_KEY."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused")
    empty = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": []}})
    sparql = {"name": "sparql_query", "output": empty}
    media = {"output_media_type": "application/sparql-results+json"}
    steps = [[{**sparql, **media}]]  # no required_columns: 6.6.1 raises comparing it
    reference = [
        {
            "template_id": "",
            "questions": [
                {"id": "q", "question_text": "A?", "reference_steps": steps},
                {"id": "q", "question_text": "A again?", "reference_answer": "7"},
            ],
        }
    ]
    actual = [{**sparql, "status": "success", "id": "s"}]
    responses = {"q": {"question_id": "q", "actual_answer": "7", "actual_steps": actual}}
    ref, resp = tmp_path / "ref.json", tmp_path / "resp.json"
    ref.write_text(json.dumps(reference))
    resp.write_text(json.dumps(responses))
    out = tmp_path / "results.json"
    result = qa_eval(app, ref, resp, out, "--semantics", "graphrag-eval-6")
    assert result.exit_code == 0, result.output
    first, second = json.loads(out.read_text())
    assert first["status"] == "error" and "KeyError: 'required_columns'" in first["error"]
    assert "KeyError" in " ".join(result.output.split())
    assert second["status"] == "success" and second["actual_steps"] == actual
    assert not [k for k in second if k.startswith("answer_")]
    assert qa_eval(app, ref, resp, out).exit_code == 2  # the seed's rules refuse repeated ids


def test_qa_eval_graphrag_eval_6_records_it_cannot_aggregate(
    app: typer.Typer, tmp_path: Path
) -> None:
    """A step without `status` stops graphrag-eval 6.6.1's aggregation: the results are
    written, the aggregates not, and the message names the sample."""
    reference = [{"template_id": "t", "questions": [{"id": "q", "question_text": "A?"}]}]
    responses = {"q": {"question_id": "q", "actual_steps": [{"name": "calc"}]}}
    ref, resp = tmp_path / "ref.json", tmp_path / "resp.json"
    ref.write_text(json.dumps(reference))
    resp.write_text(json.dumps(responses))
    out, agg = tmp_path / "results.json", tmp_path / "aggregates.json"
    result = qa_eval(
        app, ref, resp, out, "--aggregates", str(agg), "--semantics", "graphrag-eval-6"
    )
    assert result.exit_code == 1
    assert "sample [0]" in result.output and "KeyError: 'status'" in result.output
    assert json.loads(out.read_text())[0]["status"] == "success" and not agg.exists()


def test_qa_eval_unparsable_responses(app: typer.Typer, tmp_path: Path) -> None:
    broken = tmp_path / "resp.json"
    broken.write_text("[{")
    result = qa_eval(app, FIXTURES / "seed_reference.yaml", broken, tmp_path / "o.json")
    assert result.exit_code == 2 and "not valid JSON" in result.output
    assert not (tmp_path / "o.json").exists()


def test_qa_eval_bad_config(app: typer.Typer, tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text("something: else\n")
    result = qa_eval(
        app,
        FIXTURES / "seed_reference.yaml",
        FIXTURES / "responses.json",
        tmp_path / "o.json",
        "--config",
        str(config),
    )
    assert result.exit_code == 2 and "completion_model" in result.output


def test_answer_correctness_needs_columns_and_a_model(app: typer.Typer, tmp_path: Path) -> None:
    tsv = tmp_path / "in.tsv"
    tsv.write_text("Question\tActual answer\nQ\tA\n")
    result = CliRunner().invoke(
        app, ["answer-correctness", "-i", str(tsv), "-o", str(tmp_path / "o.tsv")]
    )
    assert result.exit_code == 2 and "Reference answer" in result.output
    (tmp_path / "ok.tsv").write_text("Question\tReference answer\tActual answer\nQ\tR\tA\n")
    result = CliRunner().invoke(
        app, ["answer-correctness", "-i", str(tmp_path / "ok.tsv"), "-o", str(tmp_path / "o.tsv")]
    )
    assert result.exit_code == 2 and "no judge model" in result.output
    assert not (tmp_path / "o.tsv").exists()

"""The CLI with judge models configured against the scripted server."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from gtog.cli._qa import register
from tests.integration.qa.conftest import model_config
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qa"


def write_config(tmp_path: Path, server: ScriptedServer) -> Path:
    config = tmp_path / "judge.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "completion_model": {
                    **model_config(server, "gpt-4o-mini"),
                    "api_key": "${QA_TEST_KEY}",
                },
                "embedding_model": model_config(server, "text-embedding-3-small"),
            }
        )
    )
    return config


def test_answer_correctness_tsv(
    qa_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QA_TEST_KEY", "secret-from-env")
    app = typer.Typer()
    register(app)
    source = tmp_path / "in.tsv"
    rows = [
        ("Who keeps the light?", "Maren Holt", "Maren Holt keeps it"),
        ("Which ship?", "Grey Heron, cargo ship", "The Grey Heron"),
        ("Broken?", "GARBLED", "x"),
    ]
    with source.open("w", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(["Question", "Reference answer", "Actual answer"])
        writer.writerows(rows)
    out = tmp_path / "out.tsv"
    config = write_config(tmp_path, qa_server)
    result = CliRunner().invoke(
        app, ["answer-correctness", "-i", str(source), "-o", str(out), "-c", str(config)]
    )
    assert result.exit_code == 1  # the GARBLED row failed
    with out.open(newline="") as f:
        written = list(csv.DictReader(f, delimiter="\t"))
    assert [r["Question"] for r in written] == [r[0] for r in rows]
    assert (written[0]["#Reference"], written[0]["#Matching"], written[0]["Recall"]) == (
        "1",
        "1",
        "1.0",
    )
    assert written[1]["Recall"] == "0.5" and written[1]["Error"] == ""
    assert "unusable judge reply" in written[2]["Error"]
    assert "secret-from-env" not in out.read_text() + result.output
    good = tmp_path / "good.tsv"
    good.write_text(source.read_text().rsplit("Broken?", 1)[0])
    result = CliRunner().invoke(
        app, ["answer-correctness", "-i", str(good), "-o", str(out), "-c", str(config)]
    )
    assert result.exit_code == 0, result.output


def test_qa_eval_with_graphrag_settings(qa_server: ScriptedServer, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "settings.yaml").write_text(
        yaml.safe_dump(
            {
                "completion_models": {
                    "default_completion_model": model_config(qa_server, "gpt-4o-mini")
                },
                "embedding_models": {
                    "default_embedding_model": model_config(qa_server, "text-embedding-3-small")
                },
            }
        )
    )
    app = typer.Typer()
    register(app)
    cwd = Path.cwd()
    out = tmp_path / "results.json"
    result = CliRunner().invoke(
        app,
        [
            "qa-eval",
            "--reference",
            str(FIXTURES / "seed_reference.yaml"),
            "--responses",
            str(FIXTURES / "responses.json"),
            "-o",
            str(out),
            "--config",
            str(project),
        ],
    )
    assert result.exit_code == 0, result.output
    assert Path.cwd() == cwd  # graphrag's load_config chdir is undone
    results = yaml.safe_load(out.read_text())
    assert results[0]["answer_recall"] == 1.0
    assert results[0]["answer_relevance_cost"] > 0

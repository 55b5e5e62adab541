"""Grounded or invented, end to end: graphrag's citations and stated paths checked against the
index, claim-level faithfulness, a graded judge — on one question, local and ToG."""

from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.browser import find_chromium, load_page
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Rule, ScriptedServer

pytestmark = pytest.mark.integration

CHROMIUM = find_chromium()
QUESTION = "Who keeps the lighthouse on Varn Island?"
EVIDENCE = "Maren Holt kept the lighthouse on Varn Island, a rock of black stone."


def _entity_id(context: str, title: str) -> str:
    """The id local search gave `title` in its Entities table."""
    table = context.split("-----Entities-----", 1)[1]
    row = next(line for line in table.splitlines() if f"|{title}|" in line)
    return row.split("|", 1)[0]


def local_answer(request: ChatRequest) -> str:
    """A cited answer: one citation of a record in the context, one invented (Entities
    999); three claims, one not in the context; one real edge stated, one invented."""
    real = _entity_id(request.system, "MAREN HOLT")
    return (
        f"Maren Holt keeps the lighthouse on Varn Island [Data: Entities ({real}, 999)]. "
        "The lamp burns whale oil. Zebulon Crane owns the island.\n\nEvidence:\n"
        "MAREN HOLT --[keeps the lighthouse on]--> VARN ISLAND\n"
        "MAREN HOLT --[owns]--> ASHBY"
    )


def test_citations_paths_claims_and_a_graded_judge_end_to_end(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    from tests.support.tog_rules import add_tog_rules

    add_tog_rules(llm_server)
    llm_server.rules.insert(
        0,
        Rule(
            "grounded:local",
            lambda r: "---Data tables---" in r.system and r.last_user.strip() == QUESTION,
            local_answer,
        ),
    )
    llm_server.rules.insert(
        0,
        Rule(
            "grounded:graded",
            lambda r: "Grade how correct the predicted answer is" in r.prompt,
            lambda r: json.dumps({"rationale": "right, missing details", "score": 7}),
        ),
    )
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("local", "tog"),
        extra="metrics: [citations, citation_support, path_validity, evidence_on_path, "
        "faithfulness_claims, correctness_graded]\n"
        "tog_search:\n  width: 2\n  depth: 2\n  evidence_lines: true\n",
    )
    item = {"id": "lh-01", "imdb_key": "lighthouse", "question": QUESTION}
    item |= {"answer": "Maren Holt", "context": EVIDENCE}
    (root / "qa.json").write_text(json.dumps([item]))
    result = gtog("eval", "--root", str(root), "-q")
    assert result.returncode == 0, result.stderr
    detailed, summary = load_results(root)
    (q,) = detailed["results"]
    local, tog = q["methods"]["local"], q["methods"]["tog"]

    # citations: one of the two cited records is in local's context; 1 of 3 sentences cites
    assert local["scores"]["citation_validity"] == 0.5
    assert local["scores"]["citation_coverage"] == pytest.approx(1 / 3)
    assert local["citations"] == {"invalid": ["Entities 999"]}
    assert local["scores"]["citation_support"] == 1.0  # Maren's record supports its sentence
    # stated paths: one edge of the graph, one invented
    assert local["scores"]["path_validity"] == 0.5
    assert local["flagged"]["path_validity"] == ["MAREN HOLT --[owns]--> ASHBY"]
    # claims: 2 of 3 supported, the invented one listed
    assert round(local["scores"]["faithfulness_claims"], 2) == 0.67
    assert local["flagged"]["faithfulness_claims"] == ["Zebulon Crane owns the island"]
    # graded: 7 on its 0-10 scale in the record
    assert local["scores"]["correctness_graded"] == 7
    assert local["scales"] == {"correctness_graded": [0, 10]}

    # ToG cites nothing by design; its evidence lines are its paths' edges, all real, and
    # the text unit holding the gold evidence is behind its final path
    assert tog["scores"]["citation_validity"] is None
    assert "does not cite records by design" in tog["judge_errors"]["citation_validity"]
    assert "Evidence:\nMAREN HOLT --[" in tog["response"]
    assert tog["scores"]["path_validity"] == 1.0
    assert tog["scores"]["evidence_on_path"] == 1.0
    assert "not a ToG answer" in local["judge_errors"]["evidence_on_path"]

    # the verdict line shows the graded judge as 0-1, and says so
    assert summary["metadata"]["scales"] == {"correctness_graded": [0, 10]}
    assert summary["by_method"]["local"]["correctness_graded"] == 7
    line = " ".join(result.stdout.split())
    assert "correctness graded: local and tog tie at 0.70 (its 0-10 scale shown as 0-1)" in line
    assert "correctness_graded (0-10)" in line  # the terminal table keeps the scale, and says it

    # the CSV lists what was found wrong
    with (root / "results" / "eval_results.csv").open() as f:
        rows = {r["method"]: r for r in csv.DictReader(f)}
    assert rows["local"]["invalid_citations"] == "Entities 999"
    assert rows["local"]["invented_triples"] == "MAREN HOLT --[owns]--> ASHBY"
    assert rows["local"]["unsupported_claims"] == "Zebulon Crane owns the island"
    assert rows["tog"]["invented_triples"] == ""

    # and the report: the invented id marked in the answer, the invented edge and claim
    # listed under it, the verdict line at the top
    page = (root / "results" / "report.html").read_text()
    if CHROMIUM is not None:  # the page as Chromium shows it, after its scripts ran
        loaded = load_page(CHROMIUM, (root / "results" / "report.html").as_uri())
        assert loaded.console == []
        page = loaded.dom
    assert re.search(
        r'<mark class="bad-cite" title="Entities 999: not in the context">999</mark>', page
    )
    text = html.unescape(page)
    assert "Invented triples (1)" in text and "MAREN HOLT --[owns]--> ASHBY" in text
    assert "Unsupported claims (1)" in text and "Zebulon Crane owns the island" in text
    assert "Invalid citations (1)" in text
    assert "its 0-10 scale shown as 0-1" in text

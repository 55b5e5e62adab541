"""The `citations` metric on hand-written graphrag-shaped answers, with hand-counted figures."""

from __future__ import annotations

import asyncio

import pytest

from gtog.eval._dataset import QAItem
from gtog.eval.run._config import EvalConfig
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._citations import (
    CitationCoverage,
    CitationValidity,
    check_citations,
    cited,
    context_records,
)
from gtog.eval.scoring._judges import Judgement

ITEM = QAItem(qid="q1", index_key="k", question="Who keeps the light?", reference="Maren")

# local search's context: headed tables, fields joined by `|` (graphrag's local_context)
LOCAL = """-----Reports-----
id|title|content
1|Maren and Varn Island|Maren keeps the lighthouse.


-----Entities-----
id|entity|description|number of relationships
1|MAREN HOLT|Maren Holt keeps the lighthouse on Varn Island.|5
2|TOBIAS HOLT|Tobias Holt is Maren's brother.|2
5|VARN ISLAND|A rock off Kelport.|2


-----Relationships-----
id|source|target|description|weight|links
3|MAREN HOLT|VARN ISLAND|Maren Holt keeps the lighthouse on Varn Island|9.0|1
4|MAREN HOLT|TOBIAS HOLT|Tobias Holt is the brother of Maren Holt|6.0|1


-----claims-----
id|entity|description
7|MAREN HOLT|Maren saved the Grey Heron


-----Sources-----
id|text
15|Maren climbed the stairs of the lighthouse.
16|The storm broke over Varn Island.
"""

# basic search's context: one unheaded table written by pandas (a quoted multi-line field)
BASIC = 'id|text\n2|"Maren climbed the stairs.\nThe lamp was lit."\n7|Tobias rowed out.\n'

# global search's context: one `Reports` table per batch
GLOBAL = (
    "-----Reports-----\nid|title|occurrence weight|content|rank\n2|A|1.0|x|5\n7|B|0.5|y|4\n\n"
    "-----Reports-----\nid|title|occurrence weight|content|rank\n34|C|0.2|z|3\n"
)

TOG = "-----Paths-----\nscore|path\n0.9|MAREN HOLT -[keeps]-> VARN ISLAND\n"


def _score(scorer_class: type, answer: str, context: str | None) -> Judgement:
    return asyncio.run(scorer_class(ScoringSetup()).score(ITEM, answer, context))


def test_the_context_tables_ids_are_read_for_each_method() -> None:
    assert context_records(LOCAL) == {
        "Reports": {"1"},
        "Entities": {"1", "2", "5"},
        "Relationships": {"3", "4"},
        "Claims": {"7"},
        "Sources": {"15", "16"},
    }
    assert context_records(BASIC) == {"Sources": {"2", "7"}}
    assert context_records(GLOBAL) == {"Reports": {"2", "7", "34"}}
    assert context_records(TOG) == {}


def test_every_citation_form_is_parsed() -> None:
    answer = (
        "A [Data: Entities (1, 5, +more); Relationships (3)]. "
        "B [Data: Sources (15, 16), Reports (1), Entities (2); Claims (7, +more)]. "
        "C [Entities (9)]. "
        "D [data: relationships (4)]."
    )
    got = [(c.table, c.id) for c in cited(answer)]
    assert got == [
        ("Entities", "1"),
        ("Entities", "5"),
        ("Relationships", "3"),
        ("Sources", "15"),
        ("Sources", "16"),
        ("Reports", "1"),
        ("Entities", "2"),
        ("Claims", "7"),
        ("Entities", "9"),
        ("Relationships", "4"),
    ]
    # each position points at the id itself (the report highlights it there)
    assert all(answer[c.start : c.end] == c.id for c in cited(answer))
    assert cited("Nothing [1] here [see above] (Entities 3).") == []


@pytest.mark.parametrize(
    ("answer", "context", "validity", "coverage", "invalid"),
    [
        # local: 4 distinct records cited, 3 in the context (Entities 9 is not); the same
        # record twice counts once; 3 sentences, 2 cite -> 2/3
        (
            "Maren Holt keeps the light [Data: Entities (1, 5, +more); Relationships (3)]. "
            "Her brother is Tobias [Data: Entities (1, 9)]. He fishes.",
            LOCAL,
            3 / 4,
            2 / 3,
            ["Entities 9"],
        ),
        # local, groups split by commas, with Claims and Sources and Reports: all 5 found;
        # a citation standing after the full stop belongs to the sentence before: 2 of 2
        (
            "# Answer\n\nMaren saved the ship [Data: Sources (15, 16), Reports (1); Claims (7)].\n"
            "The storm broke. [Data: Sources (16)]",
            LOCAL,
            1.0,
            1.0,
            [],
        ),
        # basic: Sources (2, 7) found, Sources 99 and Entities 1 (no such table) invented
        (
            "Maren lit the lamp [Data: Sources (2, 7)]. Tobias rowed [Sources (99); Entities (1)]."
            " Nobody else came. The end.",
            BASIC,
            2 / 4,
            2 / 4,
            ["Sources 99", "Entities 1"],
        ),
        # evidence lines (a label and stated paths) are no sentences: 1 of 2 cite
        (
            "Maren keeps it [Data: Entities (1)]. She is alone.\n\nEvidence:\n"
            "MAREN HOLT --[keeps]--> VARN ISLAND\nMAREN HOLT -> owns -> ASHBY",
            LOCAL,
            1.0,
            1 / 2,
            [],
        ),
        # global: reports across two batches; +more ignored; 64 and 46 are not there
        (
            "The island matters [Data: Reports (2, 7, 64, 46, 34, +more)].",
            GLOBAL,
            3 / 5,
            1.0,
            ["Reports 64", "Reports 46"],
        ),
    ],
)
def test_validity_and_coverage_by_hand(
    answer: str, context: str, validity: float, coverage: float, invalid: list[str]
) -> None:
    check = check_citations(answer, context)
    assert check.validity == pytest.approx(validity)
    assert check.coverage == pytest.approx(coverage)
    assert check.invalid == invalid
    v = _score(CitationValidity, answer, context)
    c = _score(CitationCoverage, answer, context)
    assert (v.score, c.score) == (pytest.approx(validity), pytest.approx(coverage))
    assert v.flagged == invalid
    assert c.flagged is None


def test_an_answer_citing_nothing_has_no_validity_and_zero_coverage() -> None:
    v = _score(CitationValidity, "Maren keeps the light. Tobias fishes.", LOCAL)
    c = _score(CitationCoverage, "Maren keeps the light. Tobias fishes.", LOCAL)
    assert v.score is None and v.error == "no citations"
    assert c.score == 0.0


def test_gtog_tog_context_has_tables_but_tog_does_not_cite() -> None:
    tog = TOG + "\n-----Entities-----\nid|entity|type|description\n1|MAREN HOLT|PERSON|x\n"
    assert context_records(tog) == {"Entities": {"1"}}
    j = _score(CitationValidity, "Maren [Data: Entities (1)].", tog)
    assert j.score is None and "does not cite records by design" in (j.error or "")


@pytest.mark.parametrize(
    ("context", "why"),
    [
        (TOG, "does not cite records by design"),
        ("Maren keeps the lighthouse (an HTTP method's plain context).", "do not cite"),
        (None, "output.save_intermediate was off"),
    ],
)
def test_a_method_without_context_records_is_unscored(context: str | None, why: str) -> None:
    for scorer in (CitationValidity, CitationCoverage):
        j = _score(scorer, "Maren [Data: Entities (1)].", context)
        assert j.score is None and why in (j.error or "")


def test_the_config_name_citations_asks_for_both_scores() -> None:
    cfg = EvalConfig.model_validate(
        {"dataset": {"path": "x"}, "indexes": {"a": "a"}, "metrics": ["citations", "f1"]}
    )
    assert cfg.metrics == ["citation_validity", "citation_coverage", "f1"]

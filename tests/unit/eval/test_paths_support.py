"""`path_validity`, `evidence_on_path` and `citation_support` on hand-written answers, against
index tables given as data (the scorers read them through `require`, as from a project)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pandas as pd
import pytest

from gtog._project import load_graphrag_config
from gtog.eval._dataset import QAItem
from gtog.eval.scoring import SCORERS
from gtog.eval.scoring._base import ScoringSetup
from gtog.eval.scoring._judges import load_prompts
from gtog.eval.scoring._paths import normalize_title, stated_triples
from gtog.eval.scoring._support import chosen
from gtog.llm._models import chat_model_from_config, run_sync
from tests.support.projects import write_project
from tests.support.scripted_server import ScriptedServer
from tests.support.world import judge_rules


class Tables:
    """Index tables as data: what a project's `require` gives."""

    def __init__(self) -> None:
        self.frames = {
            "relationships": pd.DataFrame(
                {
                    "source": ["MAREN HOLT", "ILSE DUNMORE", "OSKAR VENN"],
                    "target": ["VARN ISLAND", "GREY HERON", "KELPORT"],
                    "text_unit_ids": [["t1"], ["t2"], ["t3"]],
                }
            ),
            "entities": pd.DataFrame(
                {
                    "title": ["MAREN HOLT", "VARN ISLAND", "ILSE DUNMORE", "GREY HERON"],
                    "text_unit_ids": [["t1"], ["t1"], ["t2"], ["t2"]],
                }
            ),
            "text_units": pd.DataFrame(
                {
                    "id": ["t1", "t2", "t3"],
                    "text": [
                        "Maren Holt kept the lighthouse on Varn Island.",
                        "Captain Ilse Dunmore sailed the Grey Heron into the storm.",
                        "Oskar Venn sold whale oil in Kelport.",
                    ],
                }
            ),
        }
        self.reads = 0

    async def require(self, name: str) -> pd.DataFrame:
        self.reads += 1
        return self.frames[name]


ITEM = QAItem(
    qid="q",
    index_key="k",
    question="Who keeps the lighthouse?",
    reference="Maren Holt",
    evidence="Maren Holt kept the lighthouse on Varn Island. Oskar Venn sold whale oil.",
)
TOG_CONTEXT = (
    "-----Paths-----\nid|score|path\n1|0.9|MAREN HOLT -[keeps]-> VARN ISLAND\n\n"
    "-----Entities-----\nid|entity|type|description\n0|MAREN HOLT|PERSON|x\n1|VARN ISLAND|GEO|y\n\n"
    "-----Relationships-----\nid|source|target|description|weight\n0|MAREN HOLT|VARN ISLAND|k|9\n"
)


def test_both_triple_forms_chains_bullets_and_scores_are_read() -> None:
    text = (
        "Maren keeps it.\nEvidence:\n"
        "- MAREN HOLT --[keeps the lighthouse on]--> VARN ISLAND\n"
        "2. **Ilse Dunmore** -> captains -> Grey Heron -> sails to -> Kelport\n"
        "0.8|OSKAR VENN --[sells oil in]--> KELPORT\n"
        "maren holt --[keeps the lighthouse on]--> varn island\n"  # the same triple again
        "Tobias -> Kelport\n"  # no relation: no triple
    )
    got = [(t.source, t.relation, t.target) for t in stated_triples(text)]
    assert got == [
        ("MAREN HOLT", "keeps the lighthouse on", "VARN ISLAND"),
        ("**Ilse Dunmore**", "captains", "Grey Heron"),
        ("Grey Heron", "sails to", "Kelport"),
        ("OSKAR VENN", "sells oil in", "KELPORT"),
    ]
    assert normalize_title(" **Ilse  Dunmore** ") == "ilse dunmore"


def _score(metric: str, answer: str, context: str | None, project: object) -> object:
    scorer = SCORERS[metric](ScoringSetup(project=project))
    return asyncio.run(scorer.score(ITEM, answer, context))


def test_path_validity_counts_graph_edges_either_direction_and_lists_the_invented() -> None:
    answer = (
        "Maren keeps the light.\nEvidence:\n"
        "VARN ISLAND --[is kept by]--> Maren Holt\n"  # reversed: an edge
        "Ilse Dunmore -> captains -> Grey Heron -> sails to -> Kelport\n"  # 1 edge, 1 not
        "MAREN HOLT --[owns]--> ASHBY\n"  # invented
    )
    j = _score("path_validity", answer, "-----Entities-----\nid|entity\n1|X\n", Tables())
    assert j.score == pytest.approx(2 / 4)
    assert j.flagged == ["Grey Heron --[sails to]--> Kelport", "MAREN HOLT --[owns]--> ASHBY"]


def test_path_lines_of_an_http_context_count_but_gtog_tog_paths_do_not() -> None:
    http = "paths:\nOSKAR VENN --[sells in]--> KELPORT\nOSKAR VENN --[rules]--> FENWICK\n"
    j = _score("path_validity", "Oskar sells oil.", http, Tables())
    assert j.score == pytest.approx(1 / 2) and j.flagged == ["OSKAR VENN --[rules]--> FENWICK"]
    j = _score("path_validity", "Maren keeps it.", TOG_CONTEXT, Tables())
    assert j.score is None and "states no triple" in (j.error or "")
    j = _score("path_validity", "A --[r]--> B", None, None)
    assert j.score is None and j.error == "no index to check against"


def test_evidence_on_path_is_the_share_of_evidence_sentences_behind_the_paths() -> None:
    tables = Tables()
    # sentence 1 is held by t1 (Maren's entity and edge: on the path); sentence 2 by t3
    j = _score("evidence_on_path", "Maren Holt.", TOG_CONTEXT, tables)
    assert j.score == pytest.approx(1 / 2)
    assert j.reason == "1 of 2 evidence sentences in text units of the final paths"
    local = "-----Entities-----\nid|entity|description\n1|MAREN HOLT|x\n"
    j = _score("evidence_on_path", "Maren Holt.", local, tables)
    assert j.score is None and "not a ToG answer" in (j.error or "")
    nowhere = ITEM.model_copy(update={"evidence": "Zebulon sang on the moon."})
    scorer = SCORERS["evidence_on_path"](ScoringSetup(project=Tables()))
    j = asyncio.run(scorer.score(nowhere, "x", TOG_CONTEXT))
    assert j.score is None and "no text unit" in (j.error or "")


def test_the_index_is_read_once_per_scorer() -> None:
    tables = Tables()
    scorer = SCORERS["path_validity"](ScoringSetup(project=tables))

    async def twice() -> None:
        await asyncio.gather(*(scorer.score(ITEM, "A --[r]--> B", None) for _ in range(3)))

    asyncio.run(twice())
    assert tables.reads == 1


@pytest.mark.parametrize(
    ("n", "k", "expected"),
    [(3, 8, [0, 1, 2]), (10, 4, [0, 3, 6, 9]), (9, 8, [0, 1, 2, 3, 5, 6, 7, 8]), (5, 1, [0])],
)
def test_the_pairs_checked_are_evenly_spread(n: int, k: int, expected: list[int]) -> None:
    assert chosen(n, k) == expected


LOCAL = (
    "-----Entities-----\nid|entity|description\n"
    "1|MAREN HOLT|Maren Holt keeps the lighthouse on Varn Island.\n"
    "2|OSKAR VENN|Oskar Venn sells whale oil in Kelport.\n"
)


def test_citation_support_judges_each_sentence_with_its_records(tmp_path: Path) -> None:
    answer = (
        "Maren Holt keeps the lighthouse [Data: Entities (1)]. "
        "Maren buys oil from Oskar Venn [Data: Entities (2, 1, 99)]."
    )
    with ScriptedServer(judge_rules()) as server:
        config = load_graphrag_config(write_project(tmp_path / "p", "lighthouse", server.base_url))
        model = chat_model_from_config(config, "default_completion_model")
        setup = ScoringSetup(
            model=model, prompts=load_prompts(None, ["citation_support"]), citations_max_checked=8
        )
        j = run_sync(SCORERS["citation_support"](setup).score(ITEM, answer, LOCAL))
        asked = [e.rule for e in server.chat_log()]
        setup3 = ScoringSetup(model=model, citations_max_checked=2)
        j2 = run_sync(SCORERS["citation_support"](setup3).score(ITEM, answer, LOCAL))
    # pairs: (s1, E1) yes; (s2, E2): "Maren" is not in Oskar's record; (s2, E1): "Oskar" is
    # not in Maren's; Entities 99 is not in the context (citation_validity's business)
    assert asked == ["judge:citation-support"] * 3
    assert j.score == pytest.approx(1 / 3)
    assert j.flagged == [
        "Entities 2: Maren buys oil from Oskar Venn [Data: Entities (2, 1, 99)].",
        "Entities 1: Maren buys oil from Oskar Venn [Data: Entities (2, 1, 99)].",
    ]
    assert j.llm_calls == 3
    assert j2.llm_calls == 2 and "2 of 3 pairs checked" in (j2.reason or "")

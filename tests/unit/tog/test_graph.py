"""Title matching and candidate edges of the ToG graph."""

from __future__ import annotations

from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship

from gtog.tog._graph import KnowledgeGraph, normalise_name


def _graph() -> KnowledgeGraph:
    titles = ["MAREN HOLT", "TOBIAS HOLT", "VARN ISLAND", "THE GREY HERON", "KELPORT"]
    entities = [Entity(id=f"e{i}", short_id=str(i), title=t) for i, t in enumerate(titles)]
    rels = [
        ("MAREN HOLT", "VARN ISLAND", 9.0),
        ("TOBIAS HOLT", "MAREN HOLT", 6.0),
        ("MAREN HOLT", "THE GREY HERON", 6.0),
        ("MAREN HOLT", "KELPORT", 1.0),
        ("MAREN HOLT", "NOT AN ENTITY", 10.0),
    ]
    relationships = [
        Relationship(id=f"r{i}", short_id=str(i), source=s, target=t, weight=w, rank=i)
        for i, (s, t, w) in enumerate(rels)
    ]
    return KnowledgeGraph(entities, relationships)


def test_normalise_name() -> None:
    assert normalise_name("  the Grey-Heron's ") == "GREY HERON S"
    assert normalise_name("Varn   island") == "VARN ISLAND"


def test_match_title_exact_normalised_word_and_fuzzy() -> None:
    g = _graph()
    assert g.match_title("MAREN HOLT") == "MAREN HOLT"
    assert g.match_title("maren holt") == "MAREN HOLT"
    assert g.match_title("Grey Heron") == "THE GREY HERON"
    assert g.match_title("Tobias") == "TOBIAS HOLT"
    assert g.match_title("Holt") is None  # two entities: ambiguous
    assert g.match_title("Varn Islnd") == "VARN ISLAND"
    assert g.match_title("Fenwick") is None
    assert g.match_title("!!") is None


def test_titles_in_text() -> None:
    g = _graph()
    assert g.titles_in_text("Did maren holt row to Varn Island?") == ["MAREN HOLT", "VARN ISLAND"]
    assert g.titles_in_text("Kelportish") == []


def test_candidate_edges_both_directions_sorted_capped_and_filtered() -> None:
    g = _graph()
    edges = g.candidate_edges("MAREN HOLT", set(), set(), cap=10)
    # dangling edge to a missing entity is skipped; ties on weight -> higher rank first
    assert [(e.end, e.outgoing) for e in edges] == [
        ("VARN ISLAND", True),
        ("THE GREY HERON", True),
        ("TOBIAS HOLT", False),
        ("KELPORT", True),
    ]
    assert [e.end for e in g.candidate_edges("MAREN HOLT", {"r0"}, {"KELPORT"}, cap=2)] == [
        "THE GREY HERON",
        "TOBIAS HOLT",
    ]
    assert [e.end for e in g.candidate_edges("TOBIAS HOLT", set(), set(), cap=5)] == ["MAREN HOLT"]

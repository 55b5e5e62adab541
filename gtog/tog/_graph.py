"""The knowledge graph as ToG walks it: entities by title, edges of each entity both ways."""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from graphrag.data_model.entity import Entity
from graphrag.data_model.relationship import Relationship
from graphrag.data_model.text_unit import TextUnit

__all__ = ["Edge", "KnowledgeGraph", "normalise_name"]

_FUZZY_CUTOFF = 0.85


def normalise_name(name: str) -> str:
    """Upper case, punctuation dropped, spaces collapsed, a leading article removed."""
    text = re.sub(r"[^\w\s]", " ", name.upper())
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"^(THE|A|AN) ", "", text)


@dataclass(frozen=True)
class Edge:
    """A relationship seen from one of its ends: `start` -> `end`."""

    relationship: Relationship
    start: str
    end: str

    @property
    def outgoing(self) -> bool:
        """True when the relationship's source is `start`."""
        return self.relationship.source == self.start

    @property
    def weight(self) -> float:
        """The relationship's weight (0 when missing)."""
        return float(self.relationship.weight or 0.0)

    @property
    def description(self) -> str:
        """The relationship's description, one line."""
        return " ".join((self.relationship.description or "").split())


class KnowledgeGraph:
    """Entities, relationships and text units of one graphrag index, indexed for ToG."""

    def __init__(
        self,
        entities: Iterable[Entity],
        relationships: Iterable[Relationship],
        text_units: Iterable[TextUnit] | None = None,
    ) -> None:
        self.entities: dict[str, Entity] = {e.title: e for e in entities}
        self.entity_ids: dict[str, str] = {e.id: e.title for e in self.entities.values()}
        self.relationships: dict[str, Relationship] = {r.id: r for r in relationships}
        self.text_units: dict[str, TextUnit] = {t.id: t for t in text_units or []}
        self._edges: dict[str, list[Edge]] = defaultdict(list)
        for rel in self.relationships.values():
            if rel.source in self.entities and rel.target in self.entities:
                self._edges[rel.source].append(Edge(rel, rel.source, rel.target))
                if rel.target != rel.source:
                    self._edges[rel.target].append(Edge(rel, rel.target, rel.source))
        self._by_norm: dict[str, list[str]] = defaultdict(list)
        for title in self.entities:
            self._by_norm[normalise_name(title)].append(title)

    def candidate_edges(
        self, title: str, used: set[str], visited: set[str], cap: int | None
    ) -> list[Edge]:
        """Edges of `title` in both directions, except `used` relationship ids and edges
        back to `visited` entities; highest weight first (ties: rank, id), at most `cap`
        (None: all).
        """
        edges = [
            e
            for e in self._edges.get(title, [])
            if e.relationship.id not in used and e.end not in visited
        ]
        edges.sort(key=lambda e: (-e.weight, -(e.relationship.rank or 0), e.relationship.id))
        return edges[:cap]

    def match_title(self, mention: str) -> str | None:
        """The entity a mention names: exact, normalised, unique word match, then fuzzy."""
        if mention in self.entities:
            return mention
        norm = normalise_name(mention)
        if not norm:
            return None
        exact = self._by_norm.get(norm)
        if exact:
            return exact[0]
        words = set(norm.split())
        containing = [
            titles[0]
            for key, titles in self._by_norm.items()
            if words <= set(key.split()) or set(key.split()) <= words
        ]
        if len(containing) == 1:
            return containing[0]
        close = difflib.get_close_matches(norm, list(self._by_norm), n=1, cutoff=_FUZZY_CUTOFF)
        return self._by_norm[close[0]][0] if close else None

    def titles_in_text(self, text: str) -> list[str]:
        """Entities whose normalised title occurs in `text` as whole words, in text order."""
        haystack = f" {normalise_name(text)} "
        found = {
            titles[0]: haystack.index(f" {key} ")
            for key, titles in self._by_norm.items()
            if key and f" {key} " in haystack
        }
        return sorted(found, key=lambda t: (found[t], -len(t)))

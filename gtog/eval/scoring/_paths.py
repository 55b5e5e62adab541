"""Stated paths checked against the index's graph (no LLM): `path_validity`, `evidence_on_path`.

- `path_validity`: the share of the triples an answer states that are edges of the index's
  graph. A triple is a line `A --[relation]--> B` or `A -> relation -> B` (a chain of several
  hops is several triples), in the answer's evidence lines — as a ToG prompt asks for them;
  gtog's ToG asks for them with `tog_search.evidence_lines: true` — or among the path lines
  of the context an HTTP method or answers file returned. An edge is a row of the index's
  `relationships` table, either direction, titles normalised (NFKC, case-folded, quotes,
  markdown and extra spaces dropped); the relation's wording is not checked. The invented
  triples are the judgement's `flagged` list. Unscored when the answer states no triple.
  (gtog's own ToG context paths are graph edges by construction: they are not checked.)
- `evidence_on_path`: whether the text units holding the gold evidence are among the text
  units of ToG's final paths' edges and entities — a graph-side evidence recall. Each
  sentence of the gold evidence is held by the text units containing at least
  `HOLD_SHARE` of its content words; the score is the share of the sentences so held that
  some such unit of ToG's paths holds. Unscored without gold evidence, for an answer that
  is not ToG's (its context has no `-----Paths-----` table), and when no text unit of the
  index holds the evidence.
"""

from __future__ import annotations

import asyncio
import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gtog._errors import describe_exception
from gtog.eval.scoring._base import Judgement, ScorerBase, register_scorer
from gtog.eval.scoring._lexical import content_tokens
from gtog.tog._settings import EVIDENCE_LINES

if TYPE_CHECKING:
    from gtog.eval._dataset import QAItem

__all__ = [
    "EVIDENCE_LINES",
    "HOLD_SHARE",
    "IndexGraph",
    "Triple",
    "load_index_graph",
    "normalize_title",
    "stated_triples",
]

HOLD_SHARE = 0.5
"""A text unit holds a sentence of the gold evidence when it has this share of its words."""

_BRACKET_ARROW = re.compile(r"\s*--\[([^\]]*)\]-->\s*")
_ARROW = re.compile(r"\s+->\s+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_PATHS_HEADING = re.compile(r"^-{3,}\s*Paths\s*-{3,}\s*$", re.M | re.I)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def normalize_title(text: str) -> str:
    """An entity title as edges are compared: NFKC, case-folded, no quotes, markdown or
    extra spaces."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[*_`\"'“”‘’]", "", text)
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Triple:
    """A stated edge: `source --[relation]--> target`."""

    source: str
    relation: str
    target: str

    @property
    def text(self) -> str:
        return f"{self.source} --[{self.relation}]--> {self.target}"

    @property
    def key(self) -> frozenset[str]:
        """The edge's ends, normalised, either direction."""
        return frozenset((normalize_title(self.source), normalize_title(self.target)))


def _line_triples(line: str) -> list[Triple]:
    line = _BULLET.sub("", line.split("|")[-1]).strip().strip("`")
    if _BRACKET_ARROW.search(line):
        parts = _BRACKET_ARROW.split(line)  # [A, r1, B, r2, C]
    elif _ARROW.search(line):
        parts = _ARROW.split(line)
    else:
        return []
    if len(parts) < 3 or len(parts) % 2 == 0:
        return []
    parts = [p.strip() for p in parts]
    nodes, relations = parts[0::2], parts[1::2]
    if any(not n or len(n) > 120 for n in nodes):
        return []
    return [Triple(nodes[i], relations[i], nodes[i + 1]) for i in range(len(relations))]


def stated_triples(text: str) -> list[Triple]:
    """Every triple stated in `text`'s lines, each once, in order."""
    out: dict[tuple[frozenset[str], str], Triple] = {}
    for line in text.splitlines():
        for t in _line_triples(line):
            out.setdefault((t.key, t.relation.casefold()), t)
    return list(out.values())


@dataclass
class IndexGraph:
    """What the path metrics read of an index: its edges and the text units behind each
    entity and edge."""

    edges: set[frozenset[str]] = field(default_factory=set)
    entity_units: dict[str, set[str]] = field(default_factory=dict)
    edge_units: dict[frozenset[str], set[str]] = field(default_factory=dict)
    unit_words: dict[str, set[str]] = field(default_factory=dict)


def _ids(value: Any) -> set[str]:
    if value is None or isinstance(value, str | float):
        return {value} if isinstance(value, str) and value else set()
    return {str(v) for v in value}


async def load_index_graph(project: Any, *, units: bool = False) -> IndexGraph:
    """The index's edges (and, with `units`, the text units behind its entities and edges
    and each unit's content words)."""
    graph = IndexGraph()
    rels = await project.require("relationships")
    for row in rels[["source", "target", "text_unit_ids"]].itertuples(index=False):
        key = frozenset((normalize_title(str(row.source)), normalize_title(str(row.target))))
        graph.edges.add(key)
        if units:
            graph.edge_units.setdefault(key, set()).update(_ids(row.text_unit_ids))
    if units:
        entities = await project.require("entities")
        for row in entities[["title", "text_unit_ids"]].itertuples(index=False):
            graph.entity_units.setdefault(normalize_title(str(row.title)), set()).update(
                _ids(row.text_unit_ids)
            )
        text_units = await project.require("text_units")
        for row in text_units[["id", "text"]].itertuples(index=False):
            graph.unit_words[str(row.id)] = set(content_tokens(str(row.text)))
    return graph


class _GraphScorer(ScorerBase):
    """A scorer that reads its index's graph, once (`setup.project`)."""

    units = False

    def __init__(self, setup: Any) -> None:
        super().__init__(setup)
        self._graph: IndexGraph | None = None
        self._lock = asyncio.Lock()

    async def graph(self) -> IndexGraph | str:
        """The index graph, or why it cannot be read."""
        if self.setup.project is None:
            return "no index to check against"
        async with self._lock:
            if self._graph is None:
                try:
                    self._graph = await load_index_graph(self.setup.project, units=self.units)
                except Exception as exc:
                    return f"cannot read the index's graph: {describe_exception(exc)}"
        return self._graph


def _is_tog_context(context: str | None) -> bool:
    return bool(context) and _PATHS_HEADING.search(context or "") is not None


@register_scorer
class PathValidity(_GraphScorer):
    """The share of the triples an answer states that are edges of the index's graph."""

    name = "path_validity"
    needs = frozenset({"answer"})
    flags = "invented triples"

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """Valid triples over stated triples; unscored when none is stated."""
        triples = stated_triples(answer)
        if context and not _is_tog_context(context):  # an HTTP method's or answers file's
            seen = {(t.key, t.relation.casefold()) for t in triples}
            triples += [
                t for t in stated_triples(context) if (t.key, t.relation.casefold()) not in seen
            ]
        if not triples:
            return Judgement.unscored("the answer states no triple (A --[relation]--> B)")
        graph = await self.graph()
        if isinstance(graph, str):
            return Judgement.unscored(graph)
        invented = [t.text for t in triples if t.key not in graph.edges]
        valid = len(triples) - len(invented)
        reason = f"{valid} of {len(triples)} stated triples are edges of the graph"
        return Judgement(score=valid / len(triples), reason=reason, flagged=invented)


def _tog_units(context: str, graph: IndexGraph) -> set[str]:
    """The text units of the entities and relationships of ToG's evidence tables."""
    from gtog.eval.scoring._citations import _HEADING_RE

    heads = list(_HEADING_RE.finditer(context))
    out: set[str] = set()
    for i, head in enumerate(heads):
        name = head.group(1).strip().lower()
        end = heads[i + 1].start() if i + 1 < len(heads) else len(context)
        rows = [r.split("|") for r in context[head.end() : end].strip("\n").split("\n")[1:]]
        for r in rows:
            if name == "entities" and len(r) > 1:
                out |= graph.entity_units.get(normalize_title(r[1]), set())
            elif name == "relationships" and len(r) > 2:
                key = frozenset((normalize_title(r[1]), normalize_title(r[2])))
                out |= graph.edge_units.get(key, set())
    return out


@register_scorer
class EvidenceOnPath(_GraphScorer):
    """Whether the text units holding the gold evidence are behind ToG's final paths."""

    name = "evidence_on_path"
    needs = frozenset({"evidence", "context"})
    units = True

    async def score(self, item: QAItem, answer: str, context: str | None) -> Judgement:
        """Sentences of the evidence held by a unit of the paths, over those held at all."""
        if not _is_tog_context(context):
            return Judgement.unscored("not a ToG answer (no final paths to look along)")
        graph = await self.graph()
        if isinstance(graph, str):
            return Judgement.unscored(graph)
        on_path = _tog_units(context or "", graph)
        held = found = 0
        for sentence in _SENTENCES.split(item.evidence or ""):
            wanted = set(content_tokens(sentence))
            if not wanted:
                continue
            holders = {
                u
                for u, words in graph.unit_words.items()
                if len(wanted & words) >= HOLD_SHARE * len(wanted)
            }
            if holders:
                held += 1
                found += bool(holders & on_path)
        if not held:
            return Judgement.unscored("no text unit of the index holds the gold evidence")
        reason = f"{found} of {held} evidence sentences in text units of the final paths"
        return Judgement(score=found / held, reason=reason)

"""What one ToG search explored, compactly: its tree of candidates, depth by depth.

Every node of the tree is a topic entity (depth 0) or a candidate edge that some beam path
was offered at some depth: its `id` (`depth.n`), its `parent` (the node the path ended at),
the `relation` (its description, cut at `RELATION_CHARS`) and the `entity` it reaches, the
LLM's `score` (the hop's score: relation x entity score, 0 when entity pruning scored
the entity 0 or left it out; or the edge score x text relevance; None when the candidate
was never scored), whether it was `kept` (it is in the
next beam) and, if not, what pruned it (`pruned_by`: `relation_pruning`,
`entity_pruning`, `edge_pruning`, `min_relevance` or `beam`, the beam's global top-N cut).
Each depth also has the reasoning step's `verdict`: `go_deeper` (not enough yet),
`enough` (stopped early), `max_depth` (the last depth: no check) or `exhausted` (no path
could grow). At most `MAX_SHOWN` candidates per expanded path are kept in the record (the
kept ones first, then the best scored); the rest are counted in the depth's `omitted`.
With width 3 and depth 3 a record's tree is at most ~20 KB however long the names
(benchmarks/tog_tree_size.py).

In graphrag's result the tree is a table (`context_data["tree"]`, one row per node) and
the depths' verdicts are in `context_data["status"]`; `exploration_json` turns both, and
the `paths` table, into the record's JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:
    from gtog.tog._graph import Edge
    from gtog.tog._paths import ReasoningPath

__all__ = [
    "MAX_SHOWN",
    "PATH_CHARS",
    "RELATION_CHARS",
    "TREE_COLUMNS",
    "VERDICTS",
    "Candidate",
    "ExplorationTrace",
    "exploration_json",
]

MAX_SHOWN = 8
"""Candidates recorded per expanded path and depth (kept ones always; the rest omitted)."""
RELATION_CHARS = 72
"""Relation descriptions are cut to this many characters in the record."""
PATH_CHARS = 300
"""An evidence path's text (`A -[relation]-> B ...`) is cut to this many characters."""
TREE_COLUMNS = ["id", "parent", "depth", "relation", "entity", "score", "kept", "pruned_by"]
VERDICTS = ("go_deeper", "enough", "max_depth", "exhausted")
"""What the reasoning step decided after a depth (see the module docstring)."""


def _cut(text: str, limit: int = RELATION_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Candidate:
    """One candidate edge of a beam path: the path it grew into, or what pruned it."""

    edge: Edge
    score: float | None
    grown: ReasoningPath | None
    pruned_by: str | None


@dataclass
class ExplorationTrace:
    """The tree one search explored (filled in as the search goes; see the module doc)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    verdicts: dict[int, str] = field(default_factory=dict)
    omitted: dict[int, int] = field(default_factory=dict)
    _node: dict[int, str] = field(default_factory=dict)
    """id() of a beam path -> its node id."""
    _alive: list[ReasoningPath] = field(default_factory=list)
    """The paths `_node` is keyed by (kept so no id is reused)."""
    _count: dict[int, int] = field(default_factory=dict)

    def _add(self, depth: int, path: ReasoningPath | None, row: dict[str, Any]) -> dict[str, Any]:
        n = self._count[depth] = self._count.get(depth, 0) + 1
        row = {"id": f"{depth}.{n}", "depth": depth, **row}
        self.rows.append(row)
        if path is not None:
            self._node[id(path)] = row["id"]
            self._alive.append(path)
        return row

    def node_of(self, path: ReasoningPath) -> str | None:
        """The node a beam path ends at (None: not traced)."""
        return self._node.get(id(path))

    def topics(self, beam: Sequence[ReasoningPath]) -> None:
        """The topic entities the search starts from (depth 0, all kept)."""
        for path in beam:
            row = {"parent": None, "relation": None, "entity": path.topic, "score": None}
            self._add(0, path, {**row, "kept": True, "pruned_by": None})

    def frontier(self, depth: int, path: ReasoningPath, candidates: list[Candidate]) -> None:
        """The candidates `path` was offered at `depth` (in the order they were shown)."""
        parent = self.node_of(path)
        order = sorted(
            range(len(candidates)),
            key=lambda i: (
                candidates[i].grown is None,
                candidates[i].score is None,
                -(candidates[i].score or 0.0),
                i,
            ),
        )
        shown = order[:MAX_SHOWN]
        self.omitted[depth] = self.omitted.get(depth, 0) + len(order) - len(shown)
        for i in sorted(shown):
            c = candidates[i]
            self._add(
                depth,
                c.grown,
                {
                    "parent": parent,
                    "relation": _cut(c.edge.description or "related to"),
                    "entity": c.edge.end,
                    "score": None if c.score is None else round(float(c.score), 4),
                    "kept": False,
                    "pruned_by": c.pruned_by,
                },
            )

    def beam(self, depth: int, kept: Sequence[ReasoningPath]) -> None:
        """Mark the candidates of `depth` that are in the next beam; the others that grew a
        path were cut by the beam's top-N."""
        ids = {self.node_of(p) for p in kept}
        for row in self.rows:
            if row["depth"] != depth or row["pruned_by"] is not None:
                continue
            row["kept"] = row["id"] in ids
            if not row["kept"]:
                row["pruned_by"] = "beam"

    def verdict(self, depth: int, verdict: str) -> None:
        """What the search decided after `depth` (one of `VERDICTS`)."""
        self.verdicts[depth] = verdict

    def table(self) -> pd.DataFrame:
        """The tree as graphrag context data: one row per node."""
        return pd.DataFrame(self.rows, columns=TREE_COLUMNS)

    def status(self) -> dict[str, str]:
        """The depths' verdicts and omitted counts, as `status` columns (JSON text)."""
        return {
            "verdicts": json.dumps({str(d): v for d, v in sorted(self.verdicts.items())}),
            "omitted": json.dumps({str(d): n for d, n in sorted(self.omitted.items()) if n}),
        }


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as plain JSON values (no numpy types, NaN as None)."""
    return json.loads(df.to_json(orient="records", force_ascii=False))


def exploration_json(
    context: Any,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """`(exploration, paths)` of a ToG result's context data; None when it has no tree.

    `exploration`: one entry per depth (0 = the topic entities), `{"depth", "candidates",
    "verdict", "omitted"}` (depth 0 also `linked_by`); `paths`: the evidence paths,
    `{"node", "path", "entities", "score"}`.
    """
    if not isinstance(context, dict) or not isinstance(context.get("tree"), pd.DataFrame):
        return None
    status_df = context.get("status")
    status = _records(status_df)[0] if isinstance(status_df, pd.DataFrame) else {}
    verdicts = json.loads(status.get("verdicts") or "{}")
    omitted = json.loads(status.get("omitted") or "{}")
    nodes = _records(context["tree"])
    depths = sorted({int(n["depth"]) for n in nodes} | {int(d) for d in verdicts} | {0})
    exploration = []
    for depth in depths:
        entry: dict[str, Any] = {
            "depth": depth,
            "candidates": [
                {k: v for k, v in n.items() if k != "depth"} for n in nodes if n["depth"] == depth
            ],
            "verdict": verdicts.get(str(depth)),
            "omitted": int(omitted.get(str(depth), 0)),
        }
        if depth == 0:
            entry["verdict"] = "linked" if entry["candidates"] else "no_entity"
            entry["linked_by"] = status.get("linked_by")
        exploration.append(entry)
    paths_df = context.get("paths")
    paths = []
    for row in _records(paths_df) if isinstance(paths_df, pd.DataFrame) else []:
        paths.append(
            {
                "node": row.get("node"),
                "path": _cut(str(row.get("path") or ""), PATH_CHARS),
                "entities": str(row.get("entities") or "").split(" -> "),
                "score": row.get("score"),
            }
        )
    return exploration, paths

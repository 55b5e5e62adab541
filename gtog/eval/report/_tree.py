"""ToG's exploration tree as the report draws it: nested nodes from a record's `exploration`.

Each node is a topic entity (depth 0) or a candidate edge at some depth, hung under the
node its beam path ended at (`parent`). Kept nodes (in the next beam) are drawn in colour,
pruned ones grey with what pruned them; scores are shown; the page nests them in
`<details>` so each branch folds. Tolerant of malformed input (a node without a known
parent hangs under the root). Pure functions of the detailed results.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gtog.eval.report._readers import as_dict, as_int, as_num, as_str

__all__ = ["Exploration", "TreeNode", "exploration_tree"]


@dataclass
class TreeNode:
    """One node of the tree and the nodes below it."""

    id: str
    depth: int
    entity: str
    relation: str | None
    score: float | None
    kept: bool
    pruned_by: str | None
    evidence: bool = False
    """It ends one of the evidence paths the answer was made from."""
    children: list[TreeNode] = field(default_factory=list)


@dataclass(frozen=True)
class Exploration:
    """A ToG answer's tree, each depth's verdict, and what the record left out."""

    roots: list[TreeNode]
    verdicts: list[tuple[int, str]]
    omitted: int
    linked_by: str | None
    nodes: int


def exploration_tree(exploration: Any, paths: Any) -> Exploration | None:
    """The tree of a record's `exploration` (None when it has none)."""
    if not isinstance(exploration, list) or not exploration:
        return None
    ends = {as_str(as_dict(p).get("node")) for p in paths or [] if isinstance(p, dict)}
    nodes: dict[str, TreeNode] = {}
    parents: dict[str, str | None] = {}
    verdicts, omitted, linked_by = [], 0, None
    for level in exploration:
        level = as_dict(level)
        depth = as_int(level.get("depth")) or 0
        verdict = as_str(level.get("verdict"))
        if verdict:
            verdicts.append((depth, verdict))
        omitted += as_int(level.get("omitted")) or 0
        linked_by = linked_by or as_str(level.get("linked_by"))
        for raw in level.get("candidates") or []:
            c = as_dict(raw)
            node_id = as_str(c.get("id")) or f"{depth}.{len(nodes) + 1}"
            nodes[node_id] = TreeNode(
                id=node_id,
                depth=depth,
                entity=as_str(c.get("entity")) or "?",
                relation=as_str(c.get("relation")),
                score=as_num(c.get("score")),
                kept=bool(c.get("kept")),
                pruned_by=as_str(c.get("pruned_by")),
                evidence=node_id in ends,
            )
            parents[node_id] = as_str(c.get("parent"))
    roots = []
    for node_id, node in nodes.items():
        parent = parents[node_id]
        if parent is not None and parent in nodes and parent != node_id:
            nodes[parent].children.append(node)
        else:
            roots.append(node)
    return Exploration(roots, verdicts, omitted, linked_by, len(nodes))

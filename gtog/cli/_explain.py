"""`gtog query --method tog --explain`: ToG's exploration tree in the terminal (rich's Tree).

The same tree the report draws (gtog.eval.report._tree): topic entities, then each depth's
candidates under the node their beam path ended at, with scores; kept ones in colour,
pruned ones dim with what pruned them; each depth's verdict and the evidence paths.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text
from rich.tree import Tree

from gtog.eval.report._tree import TreeNode, exploration_tree

__all__ = ["explain"]


def _label(node: TreeNode) -> Text:
    text = Text()
    if node.relation is not None:
        text.append(f"-[{node.relation}]-> ", style="dim" if not node.kept else "")
    text.append(node.entity, style="bold cyan" if node.kept else "dim")
    if node.score is not None:
        text.append(f"  {node.score:.2f}", style="" if node.kept else "dim")
    if node.evidence:
        text.append("  evidence path", style="bold green")
    if not node.kept:
        text.append(f"  (pruned: {(node.pruned_by or '?').replace('_', ' ')})", style="dim")
    return text


def _grow(branch: Tree, nodes: list[TreeNode]) -> None:
    for node in nodes:
        _grow(branch.add(_label(node)), node.children)


def explain(question: str, context_data: Any) -> RenderableType:
    """The tree of a ToG result's context data (a note when it recorded none)."""
    from gtog.tog._trace import exploration_json

    found = exploration_json(context_data)
    tree = exploration_tree(*found) if found is not None else None
    if tree is None:
        return Text("(no exploration tree recorded)", style="dim")
    root = Tree(Text(f"ToG exploration: {question}", style="bold"))
    if not tree.roots:
        root.add(Text("no topic entity linked: answered without graph paths", style="yellow"))
    _grow(root, tree.roots)
    verdicts = ", ".join(f"depth {d}: {v.replace('_', ' ')}" for d, v in tree.verdicts if d > 0)
    notes = [f"linked by {tree.linked_by}" if tree.linked_by else "", verdicts]
    if tree.omitted:
        notes.append(f"{tree.omitted} more candidates not recorded")
    parts: list[RenderableType] = [root, Text("; ".join(n for n in notes if n), style="dim")]
    for path in found[1] if found else []:
        parts.append(Text(escape(f"path (score {path['score']}): {path['path']}"), style="dim"))
    return Group(*parts)

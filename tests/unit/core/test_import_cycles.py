"""gtog's modules import each other in one direction: no circle, not even one hidden behind
`TYPE_CHECKING` or inside a function."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import gtog

ROOT = Path(gtog.__file__).parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the gtog modules it imports anywhere in its text (a package's own parents,
    which Python imports on the way to a submodule, are not edges)."""

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                # `from pkg import name`: the submodule if `name` is one, else the package.
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base
                    for a in node.names
                ]
            else:
                continue
            for target in targets:
                found = resolve(target)
                if found and found != name and found.startswith("gtog"):
                    edges.add(found)
        graph[name] = edges
    return graph


def test_the_graph_sees_imports_behind_type_checking_and_in_functions() -> None:
    graph = _graph(_modules())
    # gtog.eval's names are imported lazily (behind TYPE_CHECKING): still edges.
    assert any(target.startswith("gtog.eval.run") for target in graph["gtog.eval"])
    # The CLI registers its commands with function-local imports: still edges.
    assert graph["gtog.cli"]


def test_no_module_imports_itself_through_a_circle() -> None:
    try:
        tuple(TopologicalSorter(_graph(_modules())).static_order())
    except CycleError as exc:
        circle = " -> ".join(exc.args[1])
        raise AssertionError(
            f"import circle: {circle}. Move the shared types down to a module both sides "
            "can import."
        ) from None

"""graphrag's private names are reached from one module, `gtog._internals`, and a graphrag
release that moves one fails here, by name."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from graphrag.query.structured_search.global_search.search import GlobalSearch

import gtog
from gtog._internals import PRIVATE_NAMES, check_internals

ROOT = Path(gtog.__file__).parent
OWNER = ROOT / "_internals.py"
PRIVATE_PACKAGES = ("graphrag", "graphrag_llm", "graphrag_vectors", "graphrag_cache")


def test_the_installed_graphrag_still_has_what_gtog_internals_uses() -> None:
    missing = check_internals()
    assert not missing, (
        "graphrag moved what gtog/_internals.py uses: "
        + "; ".join(missing)
        + ". Update gtog/_internals.py (or pin graphrag below this release)."
    )


def test_the_check_names_what_a_release_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(GlobalSearch, "_map_response_single_batch")
    assert check_internals() == [
        "graphrag.query.structured_search.global_search.search"
        ".GlobalSearch._map_response_single_batch"
    ]


def test_the_check_names_the_factory_s_model_makers(monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag.query import factory

    monkeypatch.delattr(factory, "create_embedding")
    assert check_internals() == ["graphrag.query.factory.create_embedding"]


def _private_uses(path: Path) -> list[str]:
    """A module's imports of graphrag's private names and its uses of `PRIVATE_NAMES`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        line = f"{path.relative_to(ROOT.parent)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in PRIVATE_PACKAGES:
                parts = [*node.module.split("."), *(a.name for a in node.names)]
                if any(p.startswith("_") for p in parts):
                    found.append(f"{line} imports a private name from {node.module}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] in PRIVATE_PACKAGES and any(p.startswith("_") for p in parts):
                    found.append(f"{line} imports {alias.name}")
        elif isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES:
            found.append(f"{line} uses .{node.attr}")
        elif isinstance(node, ast.Constant) and node.value in PRIVATE_NAMES:
            found.append(f"{line} names {node.value!r}")
    return found


def test_no_other_module_reaches_into_graphrag_internals() -> None:
    found = [use for p in sorted(ROOT.rglob("*.py")) if p != OWNER for use in _private_uses(p)]
    assert not found, "graphrag's private names belong in gtog/_internals.py: " + "; ".join(found)


def test_the_scan_sees_a_private_use(tmp_path: Path) -> None:
    module = tmp_path / "gtog" / "x.py"
    module.parent.mkdir()
    module.write_text(
        "from graphrag.query._private import thing\n"
        "config = getattr(model, '_model_config', None)\n"
        "engine._map_response_single_batch = wrap\n"
    )
    global ROOT
    saved, ROOT = ROOT, tmp_path / "gtog"
    try:
        assert len(_private_uses(module)) == 3
    finally:
        ROOT = saved

"""ToG's exploration tree on the example indexes: stored per answer (small), drawn by the
report (headless Chromium, a screenshot), printed by `gtog query --method tog --explain`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests.integration.eval.helpers import load_results, make_eval_root
from tests.support.browser import find_chromium, load_page, screenshot
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer
from tests.support.tog_rules import add_tog_rules

pytestmark = pytest.mark.integration

CHROMIUM = find_chromium()
BUDGET = 20_000
"""Bytes of exploration and paths a ToG record may add (the issue's ~20 KB)."""


def expanded(page: Path, out: Path) -> Path:
    """A copy of the report with every question and tree open (attributes only: the page's
    CSP hashes cover its style and script, which are unchanged)."""
    html = page.read_text(encoding="utf-8")
    html = html.replace('<details class="q"', '<details open class="q"')
    html = html.replace('<details class="tree">', '<details open class="tree">')
    out.write_text(html, encoding="utf-8")
    return out


def test_tog_answers_store_a_tree_the_report_draws(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    add_tog_rules(llm_server)
    root = make_eval_root(
        tmp_path,
        {"lighthouse": example_indexes["lighthouse"]},
        methods=("tog",),
        extra="metrics: [correctness, f1]\n",
    )
    result = gtog("eval", "--root", str(root), "--index-key", "lighthouse", "--limit", "3", "-q")
    assert result.returncode == 0, result.stderr
    detailed, _ = load_results(root)
    entries = [q["methods"]["tog"] for q in detailed["results"]]
    assert len(entries) == 3
    for entry in entries:
        tree, paths = entry["exploration"], entry["paths"]
        assert tree[0]["depth"] == 0 and tree[0]["verdict"] == "linked"
        assert len(tree) >= 2 and tree[0]["linked_by"] in ("llm", "title_scan", "embedding")
        for depth in tree[1:]:
            assert depth["verdict"] in ("go_deeper", "enough", "max_depth", "exhausted")
            for c in depth["candidates"]:
                assert {"id", "parent", "relation", "entity", "score", "kept", "pruned_by"} <= set(
                    c
                )
                assert c["kept"] == (c["pruned_by"] is None)
        kept = [c for d in tree[1:] for c in d["candidates"] if c["kept"]]
        pruned = [c for d in tree[1:] for c in d["candidates"] if not c["kept"]]
        assert kept and all(c["score"] is not None for c in kept)
        assert {c["pruned_by"] for c in pruned} <= {"relation_pruning", "entity_pruning", "beam"}
        assert paths and all(p["node"] for p in paths)
        ids = {c["id"] for d in tree for c in d["candidates"]}
        assert {p["node"] for p in paths} <= ids  # every evidence path ends at a node
        size = len(json.dumps({"exploration": tree, "paths": paths}, ensure_ascii=False))
        assert size < BUDGET, size
    assert any(
        c for e in entries for d in e["exploration"][1:] for c in d["candidates"] if not c["kept"]
    )

    page = root / "results" / "report.html"
    html = page.read_text(encoding="utf-8")
    assert html.count('<details class="tree">') == 3
    assert 'class="pruned"' in html and 'class="kept"' in html and "evidence path" in html
    if CHROMIUM is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    loaded = load_page(CHROMIUM, page.as_uri())
    assert loaded.console == [] and 'data-ready="1"' in loaded.dom
    opened = expanded(page, tmp_path / "opened.html")
    shown = load_page(CHROMIUM, opened.as_uri())
    assert shown.console == []
    assert len(re.findall(r'<li class="(?:kept|pruned)"', shown.dom)) >= 6
    png = screenshot(CHROMIUM, opened, tmp_path / "tree.png", size=(1280, 1600))
    assert png.stat().st_size > 30_000  # a drawn page, not a blank one


def test_query_explain_prints_the_tree(
    llm_server: ScriptedServer, example_indexes: dict[str, Path]
) -> None:
    from graphrag.cli.main import app as graphrag_app

    from gtog.cli._query import register

    add_tog_rules(llm_server)
    app: typer.Typer = graphrag_app
    register(app)
    question = "Who is Edda Lorne's apprentice?"
    args = ["query", "--root", str(example_indexes["orchard"]), "--method", "tog", "--explain"]
    result = CliRunner().invoke(app, [*args, question])
    assert result.exit_code == 0, result.output
    out = result.output
    assert out.startswith("Bram Osk.\n")
    assert f"ToG exploration: {question}" in out
    assert "EDDA LORNE" in out and "BRAM OSK" in out and "evidence path" in out
    assert "linked by llm" in out and "depth 1:" in out
    other = CliRunner().invoke(app, ["query", "--root", str(example_indexes["orchard"]),
                                     "--method", "local", "--explain", question])  # fmt: skip
    assert other.exit_code == 2 and "only --method tog" in other.output

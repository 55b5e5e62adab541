"""The output table the README and docs/getting-started.md show is what gtog prints for the
recorded demo run today (`python scripts/demo_output.py --write` rewrites both)."""

from __future__ import annotations

import pytest

from scripts.demo_output import PAGES, RESULTS, block, render, replace, shown


@pytest.fixture(scope="module")
def printed() -> str:
    return render(RESULTS)


def test_the_rendering_is_the_runs_table(printed: str) -> None:
    lines = printed.splitlines()
    assert lines[0] == "gtog eval: scores"
    for method in ("tog", "local", "basic"):
        assert any(line.split()[:2] == [method, "6"] for line in lines), method
    assert "[0.30, 0.90]" in printed  # Wilson's interval of 4 of 6
    assert "cost per answer" in printed and "cost per answer" not in block("scores", printed)
    assert all(line == line.rstrip() for line in lines)


@pytest.mark.parametrize("kind", sorted(PAGES))
def test_each_page_shows_the_current_rendering(kind: str, printed: str) -> None:
    page = PAGES[kind].read_text(encoding="utf-8")
    assert shown(page) == block(kind, printed), (
        f"{PAGES[kind].name}: the demo output is out of date; run "
        "`python scripts/demo_output.py --write`"
    )


def test_replace_fills_an_empty_block_and_keeps_the_rest() -> None:
    page = "intro\n<!-- demo-output:begin -->\n```text\n```\n<!-- demo-output:end -->\nafter\n"
    filled = replace(page, "scores", "a\nb\ncost per answer\nc")
    assert shown(filled) == "a\nb"
    assert filled.startswith("intro\n") and filled.endswith("<!-- demo-output:end -->\nafter\n")
    assert shown(replace(filled, "all", "x")) == "x"

"""First contact with the command line: one help style, 80 columns, a version."""

from __future__ import annotations

import importlib.metadata
import platform

import pytest

import gtog
from tests.support.projects import gtog as run_gtog
from tests.support.projects import subprocess_env

COMMANDS = [
    [],
    ["eval"],
    ["eval", "report"],
    ["eval", "merge"],
    ["query"],
    ["qa-eval"],
    ["answer-correctness"],
    ["judge-check"],
    ["local-model"],
    ["settings"],
    ["settings", "migrate"],
    ["init"],
    ["index"],
]


def test_version_names_gtog_graphrag_and_python() -> None:
    result = run_gtog("--version")
    assert result.returncode == 0, result.stderr
    graphrag = importlib.metadata.version("graphrag")
    assert result.stdout.strip() == (
        f"gtog {gtog.__version__} (graphrag {graphrag}, Python {platform.python_version()})"
    )


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "gtog")
def test_every_help_screen_has_one_style_and_fits_80_columns(command: list[str]) -> None:
    env = {**subprocess_env(), "COLUMNS": "80"}
    result = run_gtog(*command, "--help", env=env)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith("Usage: gtog"), text[:200]
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    for mark in ("╭", "│", "…", "<bool>", "\\["):  # no boxes, nothing cut, no markup escapes
        assert mark not in text, (mark, command)

"""Outside text printed through rich keeps its brackets (no markup read into it)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from gtog.cli._say import error, say, warning
from tests.support.projects import subprocess_env


def _printed(fn, message: str) -> str:  # type: ignore[no-untyped-def]
    out = io.StringIO()
    fn(Console(file=out, width=200, color_system=None), message)
    return out.getvalue()


def test_messages_keep_their_brackets() -> None:
    text = "ValueError: Column [document_id] not found; [b]not bold[/b] [red]x[/red]"
    assert _printed(error, text) == f"error: {text}\n"
    assert _printed(warning, text) == f"warning: {text}\n"
    assert _printed(say, text) == f"{text}\n"


def test_the_cli_prints_a_bracketed_path_as_it_is(tmp_path: Path) -> None:
    root = tmp_path / "study[b]"
    result = subprocess.run(
        [sys.executable, "-m", "gtog", "eval", "--root", str(root)],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert "study[b]: --root folder not found" in result.stderr, result.stderr

"""Every `gtog` command docs/why.md shows parses as written (real commands and options), and
the inputs it names that a clone has are there."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.integration.cli.test_readme_commands import parsed

REPO = Path(__file__).resolve().parents[3]
WHY = REPO / "docs" / "why.md"


def why_commands() -> list[list[str]]:
    """The `gtog ...` commands of docs/why.md's bash blocks and its workflow's `run:` lines."""
    text = WHY.read_text(encoding="utf-8")
    lines = [
        line
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for line in block.replace("\\\n", " ").splitlines()
    ]
    lines += re.findall(r"- run: (gtog .*)", text)
    commands = []
    for line in lines:
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words[:1] == ["gtog"]:
                commands.append(words[1:])
    return commands


COMMANDS = why_commands()


def test_the_page_shows_each_new_command() -> None:
    shown = {" ".join(c[:2]) for c in COMMANDS}
    assert {"eval diff", "eval report", "query --root"} <= shown
    assert any("--fail-under" in c for c in COMMANDS)
    assert any("--fail-on-regression" in c for c in COMMANDS)
    assert any("--baseline" in c for c in COMMANDS)
    assert any("--explain" in c for c in COMMANDS)


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_each_command_parses(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    contexts = parsed(args)
    root = contexts[-1].params.get("root")
    if args[:1] == ["query"]:
        assert root is not None and (Path(root) / "settings.yaml").is_file()
    if args[:1] == ["eval"] and args[1:2] == ["--root"]:
        assert (Path(root) / "eval_config.yaml").is_file()

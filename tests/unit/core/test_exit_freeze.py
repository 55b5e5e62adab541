"""`gtog` freezes its heap when its command is done (issue 45): the interpreter's shutdown
then skips collecting everything the command imported (1-3 s after the last file was
written on 2 cores), whether the command succeeded or failed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.projects import subprocess_env

PROBE = """
import atexit, gc, json, sys
from gtog.cli import main

# registered before the command's own exit hooks: runs last, just before finalization
atexit.register(lambda: print("frozen:", json.dumps(gc.get_freeze_count())))
sys.argv = ["gtog", *json.loads(sys.argv[1])]
main()
"""


@pytest.mark.parametrize(
    ("argv", "code"),
    [(["--version"], 0), (["eval", "--root", "/nonexistent/gtog-root"], 2)],
)
def test_the_heap_is_frozen_when_the_command_ends(argv: list[str], code: int) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert probe.returncode == code, probe.stderr
    [line] = [x for x in probe.stdout.splitlines() if x.startswith("frozen: ")]
    assert int(line.removeprefix("frozen: ")) > 0

"""A command with no model call to make imports no model client (issue 45): a finished run
re-invoked, `eval report` and `eval diff` never import LiteLLM, the providers' clients or
graphrag's query engines (seconds of imports on 2 cores), and a run that does call builds
its clients when the first call is due."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.eval.helpers import make_eval_root
from tests.support.projects import gtog, subprocess_env
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

HEAVY = ("litellm", "openai", "graphrag_llm.completion", "graphrag.query", "gtog.search._builders")

PROBE = """
import json, sys
from gtog.cli import main
for argv in json.loads(sys.argv[1]):
    sys.argv = ["gtog", *argv]
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, (argv, exc.code)
print(json.dumps(sorted(sys.modules)))
"""


def test_commands_without_a_model_call_import_no_model_client(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q"]
    first = gtog(*args)
    assert first.returncode == 0, first.stderr
    out = str(root / "results")
    commands = [args, ["eval", "report", out], ["eval", "diff", out, out]]
    # a plain process (the tests' zygote has every client imported already)
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(commands)],
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert probe.returncode == 0, probe.stderr
    assert "nothing to run" in probe.stderr
    modules = set(json.loads(probe.stdout.strip().splitlines()[-1]))
    assert [m for m in HEAVY if m in modules] == []

"""A run's first model requests import nothing on the event loop: `import_clients` (run in
a worker thread before them) imports what graphrag_llm's model factories and LiteLLM's
first request and reply would (graphrag_llm's LiteLLM models pull in azure.identity, ~0.1 s
of imports). Checked in a fresh interpreter: the modules that appear after `import_clients`,
while a chat and an embedding model are made and each makes its first call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.projects import subprocess_env, write_project
from tests.support.scripted_server import ScriptedServer
from tests.support.world import default_rules

SCRIPT = """
import json, sys
from pathlib import Path
from gtog._project import load_graphrag_config
from gtog.llm._models import (
    chat_model_from_config, embedding_model_from_config, import_clients, run_sync
)

config = load_graphrag_config(Path(sys.argv[1]))
chat = chat_model_from_config(config, "default_completion_model")
embedding = embedding_model_from_config(config, "default_embedding_model")
import_clients()
before = set(sys.modules)


async def first_calls():
    await embedding.embed(["Who keeps the lighthouse?"])
    await chat.chat("Who keeps the lighthouse?")


run_sync(first_calls())
print(json.dumps(sorted(m for m in sys.modules if m not in before)))
"""


def test_first_model_calls_import_no_module(tmp_path: Path) -> None:
    with ScriptedServer(default_rules(), embedding_dims=64) as server:
        project = write_project(tmp_path / "p", "lighthouse", server.base_url)
        done = subprocess.run(
            [sys.executable, "-c", SCRIPT, str(project)],
            env=subprocess_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])
    third_party = [m for m in imported if not m.startswith("gtog")]
    assert third_party == [], f"imported by the first calls, not by import_clients: {third_party}"

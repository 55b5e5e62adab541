"""Create and index real graphrag projects that talk to the scripted server."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
STORIES = REPO / "eval" / "stories"

SETTINGS = """\
completion_models:
  default_completion_model:
    model_provider: openai
    model: gpt-4o-mini
    api_base: {api_base}
    api_key: ${{GTOG_TEST_API_KEY}}
    retry:
      type: immediate
      max_retries: 2
embedding_models:
  default_embedding_model:
    model_provider: openai
    model: text-embedding-3-small
    api_base: {api_base}
    api_key: ${{GTOG_TEST_API_KEY}}
input:
  type: text
chunking:
  type: tokens
  size: 250
  overlap: 20
  encoding_model: o200k_base
input_storage:
  type: file
  base_dir: "input"
output_storage:
  type: file
  base_dir: "output"
reporting:
  type: file
  base_dir: "logs"
cache:
  type: none
vector_store:
  type: lancedb
  db_uri: output/lancedb
  vector_size: {dims}
embed_text:
  embedding_model_id: default_embedding_model
extract_graph:
  completion_model_id: default_completion_model
  entity_types: [organization,person,geo,event]
  max_gleanings: 1
summarize_descriptions:
  completion_model_id: default_completion_model
  max_length: 500
cluster_graph:
  max_cluster_size: 10
extract_claims:
  enabled: false
community_reports:
  completion_model_id: default_completion_model
  max_length: 2000
  max_input_length: 8000
snapshots:
  graphml: false
  embeddings: false
local_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
global_search:
  completion_model_id: default_completion_model
drift_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
basic_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
"""

TEST_API_KEY = "sk-test-SECRET-do-not-log-0123456789"


def subprocess_env() -> dict[str, str]:
    """Environment for subprocesses: offline, with the test key."""
    env = dict(os.environ)
    env.update(
        GTOG_TEST_API_KEY=TEST_API_KEY,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        HF_HUB_OFFLINE="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    return env


def write_project(root: Path, story: str, api_base: str, dims: int = 64) -> Path:
    """A graphrag project folder for one example story (settings + input)."""
    (root / "input").mkdir(parents=True, exist_ok=True)
    shutil.copy(STORIES / f"{story}.txt", root / "input" / f"{story}.txt")
    (root / "settings.yaml").write_text(SETTINGS.format(api_base=api_base, dims=dims))
    return root


def retarget(root: Path, api_base: str) -> None:
    """Point an existing project's models at another server."""
    text = (root / "settings.yaml").read_text()
    lines = [
        f"    api_base: {api_base}" if line.strip().startswith("api_base:") else line
        for line in text.splitlines()
    ]
    (root / "settings.yaml").write_text("\n".join(lines) + "\n")


def gtog(
    *args: str, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the `gtog` CLI in its own process (offline env, test API key).

    The process is forked from the tests' zygote (tests/support/zygote.py), which has the
    heavy modules imported already; a plain subprocess where it cannot be.
    """
    from tests.support.zygote import run_gtog

    env = subprocess_env() if env is None else env
    result = run_gtog(list(args), env, timeout)
    if result is not None:
        return result
    return subprocess.run(
        [sys.executable, "-m", "gtog", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_gtog(*args: str, env: dict[str, str] | None = None) -> Any:
    """Start the `gtog` CLI without waiting: an object with `pid`, `poll()`, `kill()` and
    `wait(timeout=...)` (forked from the zygote; a plain `Popen` where it cannot be)."""
    from tests.support.zygote import start_gtog as fork

    env = subprocess_env() if env is None else env
    forked = fork(list(args), env)
    if forked is not None:
        return forked
    return subprocess.Popen(
        [sys.executable, "-m", "gtog", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def index_project(root: Path) -> None:
    """Run graphrag's own `index` command on the project (through `gtog index`)."""
    result = gtog("index", "--root", str(root), timeout=600)
    if result.returncode != 0 or not (root / "output" / "entities.parquet").exists():
        raise RuntimeError(f"indexing {root} failed:\n{result.stdout}\n{result.stderr}")


PROVIDERS: dict[str, dict[str, dict[str, str]]] = {
    "gemini": {
        "completion_models": {"model_provider": "gemini", "model": "gemini-2.5-flash"},
        "embedding_models": {"model_provider": "gemini", "model": "gemini-embedding-001"},
    },
    "azure": {
        "completion_models": {
            "model_provider": "azure",
            "model": "gpt-4o-mini",
            "azure_deployment_name": "chat-deployment",
            "api_version": "2024-10-21",
        },
        "embedding_models": {
            "model_provider": "azure",
            "model": "text-embedding-3-small",
            "azure_deployment_name": "embedding-deployment",
            "api_version": "2024-10-21",
        },
    },
    "local": {  # an OpenAI-compatible server (llama.cpp, vLLM, Ollama): no price known
        "completion_models": {"model_provider": "openai", "model": "llama-3.1-8b-instruct"},
        "embedding_models": {"model_provider": "openai", "model": "nomic-embed-text"},
    },
}
"""Model entries of each provider the scripted server speaks (`provider_copy`)."""


def provider_copy(source: Path, dest: Path, provider: str, server: Any) -> Path:
    """A copy of the indexed project `source` whose models are `provider`'s, served by the
    scripted `server` in that provider's wire format (the index is the same: the server's
    embeddings do not depend on the wire)."""
    import yaml

    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("logs", "cache"))
    api_base = {
        "gemini": server.gemini_base,
        "azure": server.azure_base,
        "local": server.base_url,
    }[provider]
    data = yaml.safe_load((dest / "settings.yaml").read_text())
    for group, entry in PROVIDERS[provider].items():
        for model in data[group].values():
            model.update(entry, api_base=api_base)
    (dest / "settings.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return dest

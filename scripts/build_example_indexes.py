#!/usr/bin/env python
"""Rebuild the bundled example GraphRAG indexes with the local model (offline demo).

    pip install -e '.[local]'
    python scripts/build_example_indexes.py            # both stories
    python scripts/build_example_indexes.py orchard    # one story

For each story in eval/stories/ this writes eval/indexes/<key>/ with settings.yaml,
input/<key>.txt and output/ (parquet tables + output/lancedb), indexed by graphrag's
standard pipeline against the local server (Qwen2.5-Coder-1.5B Q4_K_M + MiniLM-L6 384-d),
which the script starts and stops itself. Snapshots, cache and logs are off or removed
so the committed folders stay small. Takes several minutes per story on 2 CPU cores.

The committed settings.yaml names the local models at http://127.0.0.1:8765/v1 (the
default port of `gtog local-model serve`); `gtog eval --local` / `gtog query --local`
override the address with the server they start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["NO_PROXY"] = "127.0.0.1,localhost"

REPO = Path(__file__).resolve().parents[1]
STORIES = REPO / "eval" / "stories"
INDEXES = REPO / "eval" / "indexes"
DEFAULT_KEYS = ("lighthouse", "orchard")

SETTINGS = """\
# Example project for gtog's offline demo mode, indexed with the local model by
# scripts/build_example_indexes.py. The models below are served by
# `gtog local-model serve` (default port 8765); `--local` runs override the address.
concurrent_requests: 1
completion_models:
  default_completion_model:
    model_provider: openai
    model: {chat_model}
    api_base: http://127.0.0.1:8765/v1
    api_key: {api_key}
    call_args:
      temperature: 0
      timeout: 1800
    retry:
      type: immediate
      max_retries: 2
embedding_models:
  default_embedding_model:
    model_provider: openai
    model: {embedding_model}
    api_base: http://127.0.0.1:8765/v1
    api_key: {api_key}
    call_args:
      timeout: 1800
input:
  type: text
chunking:
  type: tokens
  size: 300
  overlap: 30
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
  entity_types: [person,organization,geo,event,object]
  max_gleanings: 0
summarize_descriptions:
  completion_model_id: default_completion_model
  max_length: 120
cluster_graph:
  max_cluster_size: 10
extract_claims:
  enabled: false
community_reports:
  completion_model_id: default_completion_model
  max_length: 300
  max_input_length: 3000
snapshots:
  graphml: false
  embeddings: false
local_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  max_context_tokens: 2500
global_search:
  completion_model_id: default_completion_model
  max_context_tokens: 2500
  data_max_tokens: 2500
drift_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  data_max_tokens: 2500
basic_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  max_context_tokens: 2500
  k: 5
"""


def write_project(key: str) -> Path:
    """A fresh project folder for story `key` (old output removed)."""
    from gtog.local._lifecycle import LOCAL_API_KEY
    from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_DIMS, EMBEDDING_MODEL_NAME

    root = INDEXES / key
    for sub in ("output", "logs", "cache", "input"):
        shutil.rmtree(root / sub, ignore_errors=True)
    (root / "input").mkdir(parents=True)
    shutil.copy(STORIES / f"{key}.txt", root / "input" / f"{key}.txt")
    (root / "settings.yaml").write_text(
        SETTINGS.format(
            chat_model=CHAT_MODEL_NAME,
            embedding_model=EMBEDDING_MODEL_NAME,
            api_key=LOCAL_API_KEY,
            dims=EMBEDDING_DIMS,
        )
    )
    return root


def index(root: Path, base_url: str) -> dict[str, object]:
    """Run graphrag's standard indexing pipeline on `root` against `base_url`."""
    from graphrag.api import build_index
    from graphrag.config.load_config import load_config

    from gtog.local import local_model_overrides

    cwd = Path.cwd()
    try:
        config = load_config(
            root, cli_overrides=local_model_overrides(base_url, root, search_limits=False)
        )
        started = time.monotonic()
        results = asyncio.run(build_index(config=config))
        seconds = time.monotonic() - started
    finally:
        os.chdir(cwd)  # load_config chdirs into the project
    errors = [f"{r.workflow}: {r.error}" for r in results if r.error is not None]
    if errors:
        raise RuntimeError(f"indexing {root.name} failed: " + "; ".join(errors))
    return {"seconds": round(seconds, 1), "workflows": [r.workflow for r in results]}


def summarize(root: Path) -> dict[str, object]:
    """Row counts of the main tables and the folder size."""
    import pandas as pd

    out = root / "output"
    counts = {
        name: len(pd.read_parquet(out / f"{name}.parquet"))
        for name in ("text_units", "entities", "relationships", "communities", "community_reports")
        if (out / f"{name}.parquet").exists()
    }
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    return {"rows": counts, "bytes": size}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("keys", nargs="*", default=list(DEFAULT_KEYS), help="story keys")
    args = parser.parse_args(argv)

    from gtog.local import LocalExtraMissingError, running_local_server

    try:
        server = running_local_server()
        info = server.__enter__()
    except LocalExtraMissingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report: dict[str, object] = {}
    try:
        print(f"local model server at {info.base_url}", flush=True)
        for key in args.keys:
            root = write_project(key)
            print(f"[{key}] indexing ...", flush=True)
            result = index(root, info.base_url)
            shutil.rmtree(root / "logs", ignore_errors=True)
            shutil.rmtree(root / "cache", ignore_errors=True)
            result.update(summarize(root))
            report[key] = result
            print(
                f"[{key}] done in {result['seconds']} s: {result['rows']}, "
                f"{result['bytes'] / 1024:.0f} KiB",
                flush=True,
            )
    finally:
        server.__exit__(None, None, None)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

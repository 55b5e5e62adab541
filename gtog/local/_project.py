"""A graphrag project's settings for the bundled local model (`gtog init --local`).

The settings name the local models at `gtog local-model serve`'s default address, so
graphrag's own commands work against that server; `gtog index/query/eval --local` point
them at the server they start. They are sized for a 1.5B model on 2 CPU cores: short
chunks (each extraction has fewer entities to list), no gleaning pass, one request at a
time, and room for a whole extraction reply (`LOCAL_MAX_TOKENS`).
"""

from __future__ import annotations

from pathlib import Path

from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_DIMS, EMBEDDING_MODEL_NAME

__all__ = ["LOCAL_ADDRESS", "LOCAL_MAX_TOKENS", "local_settings", "write_local_settings"]

LOCAL_ADDRESS = "http://127.0.0.1:8765/v1"
"""Where `gtog local-model serve` listens by default."""

LOCAL_MAX_TOKENS = 3000
"""Output tokens a local indexing reply may use. The server's own cap (1,024 when a request
sets none) cut 7 of 8 extraction replies of a 1,000-word text; an extraction prompt of a
300-token chunk is ~2,100 tokens, so 3,000 more still fit the 8,192-token context (and
llama.cpp trims the cap to what is left of it). Those replies were long because the model
listed its records again and again; the server now ends a reply that repeats itself
(`gtog.local._backend.REPEAT_CUT`), so most end far below this."""

_SETTINGS = """\
### graphrag settings for the bundled local model (written by `gtog init --local`).
### `gtog index --local`, `gtog query --local` and `gtog eval --local` start the local
### model server and point the models below at it; graphrag's own commands work against
### `gtog local-model serve` (this address). To use a real model instead, run `gtog init`
### in a new folder (or change the two models below) and drop --local.

concurrent_requests: 1           # the local server answers one request at a time

completion_models:
  default_completion_model:
    model_provider: openai
    model: {chat_model}
    api_base: {address}
    api_key: gtog-local-no-key   # the local server takes any key
    call_args:
      temperature: 0
      max_tokens: {max_tokens}         # room for a whole extraction reply (default: 1024)
      timeout: 1800
    retry:
      type: immediate
      max_retries: 2

embedding_models:
  default_embedding_model:
    model_provider: openai
    model: {embedding_model}
    api_base: {address}
    api_key: gtog-local-no-key
    call_args:
      timeout: 1800

input:
  type: text                     # [csv, text, json, jsonl]: put your .txt files in input/

chunking:
  type: tokens
  size: 300                      # short chunks: a 1.5B model lists fewer entities per reply
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
  type: json
  storage:
    type: file
    base_dir: "cache"

vector_store:
  type: lancedb
  db_uri: output/lancedb
  vector_size: {dims}

embed_text:
  embedding_model_id: default_embedding_model

extract_graph:
  completion_model_id: default_completion_model
  prompt: "prompts/extract_graph.txt"
  entity_types: [person,organization,geo,event,object]
  max_gleanings: 0

summarize_descriptions:
  completion_model_id: default_completion_model
  prompt: "prompts/summarize_descriptions.txt"
  max_length: 120

cluster_graph:
  max_cluster_size: 10

extract_claims:
  enabled: false
  completion_model_id: default_completion_model
  prompt: "prompts/extract_claims.txt"

community_reports:
  completion_model_id: default_completion_model
  graph_prompt: "prompts/community_report_graph.txt"
  text_prompt: "prompts/community_report_text.txt"
  max_length: 300
  max_input_length: 3000

snapshots:
  graphml: false
  embeddings: false

local_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/local_search_system_prompt.txt"
  max_context_tokens: 2500

global_search:
  completion_model_id: default_completion_model
  map_prompt: "prompts/global_search_map_system_prompt.txt"
  reduce_prompt: "prompts/global_search_reduce_system_prompt.txt"
  knowledge_prompt: "prompts/global_search_knowledge_system_prompt.txt"
  max_context_tokens: 2500
  data_max_tokens: 2500

drift_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/drift_search_system_prompt.txt"
  reduce_prompt: "prompts/drift_search_reduce_prompt.txt"
  data_max_tokens: 2500

basic_search:
  completion_model_id: default_completion_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/basic_search_system_prompt.txt"
  max_context_tokens: 2500
  k: 5
"""


def local_settings() -> str:
    """The settings.yaml text of a project for the local model."""
    return _SETTINGS.format(
        chat_model=CHAT_MODEL_NAME,
        embedding_model=EMBEDDING_MODEL_NAME,
        address=LOCAL_ADDRESS,
        max_tokens=LOCAL_MAX_TOKENS,
        dims=EMBEDDING_DIMS,
    )


def write_local_settings(root: Path) -> Path:
    """Write `root/settings.yaml` for the local model; return its path."""
    path = Path(root) / "settings.yaml"
    path.write_text(local_settings(), encoding="utf-8")
    return path

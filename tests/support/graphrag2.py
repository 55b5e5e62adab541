# ruff: noqa: E501  (the settings texts keep graphrag init's own long comment lines)
"""graphrag 2.x settings files, as users' projects carry them, for a 2.x-built index.

Written here from graphrag v2.7.2's `graphrag/config/init_content.py` (the keys `graphrag
init` wrote, with its defaults), its `LanguageModelConfig` and `VectorStoreConfig`:
- `DEFAULT_INIT`: the init file, models pointed at the scripted server, `db_uri` as 2.x
  wrote it on Windows (`output\\lancedb`), the key in `.env` (`${GRAPHRAG_API_KEY}`);
- `AZURE`: `azure_openai_chat` / `azure_openai_embedding` entries (deployment, api_version);
- `GEMINI`: LiteLLM's `gemini` provider, a vector store carrying the `index_schma:` typo real
  files have (2.x ignored it), and the fork-shaped `tog_search:` block.

`graphrag2_project(src, dst, text)` makes a project of the 3.3 index at `src` laid out as
graphrag 2.x wrote it (`tests.support.legacy`) with one of these settings files, the search
prompts as files (graphrag's own default texts, so answers match the original's).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["AZURE", "DEFAULT_INIT", "GEMINI", "PROMPTS", "graphrag2_project"]

_PIPELINE = r"""
### Input settings ###

input:
  storage:
    type: file # or blob
    base_dir: "input"
  file_type: text # [csv, text, json]

chunks:
  size: 1200
  overlap: 100
  group_by_columns: [id]

### Output/storage settings ###

output:
  type: file # [file, blob, cosmosdb]
  base_dir: "output"

cache:
  type: file # [file, blob, cosmosdb]
  base_dir: "cache"

reporting:
  type: file # [file, blob]
  base_dir: "logs"

vector_store:
  default_vector_store:
    type: lancedb
    db_uri: output\lancedb
    container_name: default{schema_typo}

### Workflow settings ###

embed_text:
  model_id: default_embedding_model
  vector_store_id: default_vector_store

extract_graph:
  model_id: default_chat_model
  prompt: "prompts/extract_graph.txt"
  entity_types: [organization,person,geo,event]
  max_gleanings: 1

summarize_descriptions:
  model_id: default_chat_model
  prompt: "prompts/summarize_descriptions.txt"
  max_length: 500

extract_graph_nlp:
  text_analyzer:
    extractor_type: regex_english # [regex_english, syntactic_parser, cfg]
  async_mode: threaded # or asyncio

cluster_graph:
  max_cluster_size: 10

extract_claims:
  enabled: false
  model_id: default_chat_model
  prompt: "prompts/extract_claims.txt"
  description: "Any claims or facts that could be relevant to information discovery."
  max_gleanings: 1

community_reports:
  model_id: default_chat_model
  graph_prompt: "prompts/community_report_graph.txt"
  text_prompt: "prompts/community_report_text.txt"
  max_length: 2000
  max_input_length: 8000

embed_graph:
  enabled: false # if true, will generate node2vec embeddings for nodes

umap:
  enabled: false # if true, will generate UMAP embeddings for nodes (embed_graph must also be enabled)

snapshots:
  graphml: false
  embeddings: false

### Query settings ###

local_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/local_search_system_prompt.txt"

global_search:
  chat_model_id: default_chat_model
  map_prompt: "prompts/global_search_map_system_prompt.txt"
  reduce_prompt: "prompts/global_search_reduce_system_prompt.txt"
  knowledge_prompt: "prompts/global_search_knowledge_system_prompt.txt"

drift_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/drift_search_system_prompt.txt"
  reduce_prompt: "prompts/drift_search_reduce_prompt.txt"

basic_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  prompt: "prompts/basic_search_system_prompt.txt"
"""

DEFAULT_INIT = r"""### This config file contains required core defaults that must be set, along with a handful of common optional settings.
### For a full list of available settings, see https://microsoft.github.io/graphrag/config/yaml/

### LLM settings ###
## There are a number of settings to tune the threading and token limits for LLM calls - check the docs.

models:
  default_chat_model:
    type: chat
    model_provider: openai
    auth_type: api_key # or azure_managed_identity
    api_key: ${GRAPHRAG_API_KEY} # set this in the generated .env file, or remove if managed identity
    model: gpt-4o-mini
    api_base: {api_base}
    # api_version: 2024-05-01-preview
    model_supports_json: true # recommended if this is available for your model.
    concurrent_requests: 25
    async_mode: threaded # or asyncio
    retry_strategy: exponential_backoff
    max_retries: 10
    tokens_per_minute: null
    requests_per_minute: null
  default_embedding_model:
    type: embedding
    model_provider: openai
    auth_type: api_key
    api_key: ${GRAPHRAG_API_KEY}
    model: text-embedding-3-small
    api_base: {api_base}
    # api_version: 2024-05-01-preview
    concurrent_requests: 25
    async_mode: threaded # or asyncio
    retry_strategy: exponential_backoff
    max_retries: 10
    tokens_per_minute: null
    requests_per_minute: null
""" + _PIPELINE.replace("{schema_typo}", "")
"""graphrag 2.x's default init file (v2.7.2), `{api_base}` to fill."""

AZURE = r"""models:
  default_chat_model:
    type: azure_openai_chat
    auth_type: api_key
    api_key: ${AZURE_OPENAI_API_KEY}
    model: gpt-4o-mini
    deployment_name: chat-deployment
    api_base: {api_base}
    api_version: 2024-05-01-preview
    model_supports_json: true
    concurrent_requests: 10
    async_mode: threaded
    retry_strategy: native
    max_retries: 5
    max_retry_wait: 30
    tokens_per_minute: 80000
    requests_per_minute: 480
  default_embedding_model:
    type: azure_openai_embedding
    auth_type: api_key
    api_key: ${AZURE_OPENAI_API_KEY}
    model: text-embedding-3-small
    deployment_name: embedding-deployment
    api_base: {api_base}
    api_version: 2024-05-01-preview
    concurrent_requests: 10
    async_mode: threaded
    retry_strategy: native
    max_retries: 5
    tokens_per_minute: null
    requests_per_minute: null
""" + _PIPELINE.replace("{schema_typo}", "")
"""A graphrag 2.x Azure OpenAI project (fnllm-era types), `{api_base}` to fill."""

GEMINI = (
    r"""models:
  default_chat_model:
    type: chat
    auth_type: api_key
    api_key: ${GEMINI_API_KEY}
    model_provider: gemini
    model: gemini-2.5-flash
    api_base: {api_base}
    model_supports_json: true
  default_embedding_model:
    type: embedding
    auth_type: api_key
    api_key: ${GEMINI_API_KEY}
    model_provider: gemini
    model: gemini-embedding-001
    api_base: {api_base}
"""
    + _PIPELINE.replace(
        "{schema_typo}", "\n    index_schma:\n      entity.description:\n        vector_size: 3072"
    )
    + """
tog_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  width: 3
  depth: 3
  prune_strategy: llm
  num_retain_entity: 5
  temperature_exploration: 0.4
  temperature_reasoning: 0.0
  max_context_tokens: 8000
  max_exploration_paths: 10
"""
)
"""A graphrag 2.x Gemini project (LiteLLM), with the fork's `tog_search:`, `{api_base}` to fill."""

PROMPTS = {
    "local_search_system_prompt.txt": "local_search_system_prompt.LOCAL_SEARCH_SYSTEM_PROMPT",
    "basic_search_system_prompt.txt": "basic_search_system_prompt.BASIC_SEARCH_SYSTEM_PROMPT",
    "global_search_map_system_prompt.txt": "global_search_map_system_prompt.MAP_SYSTEM_PROMPT",
    "global_search_reduce_system_prompt.txt": (
        "global_search_reduce_system_prompt.REDUCE_SYSTEM_PROMPT"
    ),
    "global_search_knowledge_system_prompt.txt": (
        "global_search_knowledge_system_prompt.GENERAL_KNOWLEDGE_INSTRUCTION"
    ),
    "drift_search_system_prompt.txt": "drift_search_system_prompt.DRIFT_LOCAL_SYSTEM_PROMPT",
    "drift_search_reduce_prompt.txt": "drift_search_system_prompt.DRIFT_REDUCE_PROMPT",
}
"""Search prompt file -> its text in `graphrag.prompts.query` (graphrag's own defaults),
written where the 2.x init file points."""


def _prompt_text(where: str) -> str:
    import importlib

    module, name = where.rsplit(".", 1)
    return str(getattr(importlib.import_module(f"graphrag.prompts.query.{module}"), name))


def graphrag2_project(src: Path, dst: Path, settings: str, api_base: str) -> Path:
    """A copy of the indexed project at `src` as graphrag 2.x left it: the index in 2.x's
    layout, `settings` (one of this module's texts) as its settings.yaml, the search
    prompt files it names, and a `.env` holding the key its models read."""
    from tests.support.legacy import legacy_index
    from tests.support.projects import TEST_API_KEY

    legacy_index(src, dst, "2.x")
    (dst / "settings.yaml").write_text(settings.replace("{api_base}", api_base))
    (dst / "prompts").mkdir(exist_ok=True)
    for file, where in PROMPTS.items():
        (dst / "prompts" / file).write_text(_prompt_text(where))
    keys = ("GRAPHRAG_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY")
    (dst / ".env").write_text("".join(f"{k}={TEST_API_KEY}\n" for k in keys))
    return dst

"""graphrag 2.x's settings vocabulary, as `gtog.compat._settings` translates it: its model
types, the keys of each block it knew, and where each workflow and search named its models.

Data only: which key is translated, carried over or refused is decided in `_settings`.
"""

from __future__ import annotations

__all__ = [
    "CALL_ARGS",
    "CHAT",
    "EMBEDDING",
    "EMBEDDING_ID",
    "LEGACY_EMBEDDINGS",
    "MODEL_ID",
    "MODEL_KEYS",
    "REASONING",
    "SAME_FIELDS",
    "SCHEMA_KEYS",
    "STORAGE_KEYS",
    "STRATEGY",
    "VECTOR_KEYS",
]

CHAT = {"chat": None, "openai_chat": "openai", "azure_openai_chat": "azure"}
EMBEDDING = {"embedding": None, "openai_embedding": "openai", "azure_openai_embedding": "azure"}
REASONING = {"o1", "o1-mini", "o3-mini"}
"""graphrag 2.x's reasoning models (`is_reasoning_model`): no temperature was sent."""
CALL_ARGS = (
    "temperature",
    "top_p",
    "n",
    "frequency_penalty",
    "presence_penalty",
    "max_tokens",
    "max_completion_tokens",
    "reasoning_effort",
)
MODEL_KEYS = {
    "api_key",
    "auth_type",
    "type",
    "model_provider",
    "model",
    "encoding_model",
    "api_base",
    "api_version",
    "deployment_name",
    "organization",
    "proxy",
    "audience",
    "model_supports_json",
    "request_timeout",
    "tokens_per_minute",
    "requests_per_minute",
    "rate_limit_strategy",
    "retry_strategy",
    "max_retries",
    "max_retry_wait",
    "concurrent_requests",
    "async_mode",
    "responses",
    *CALL_ARGS,
}
"""Every field of graphrag 2.x's `LanguageModelConfig` (v2.7.2)."""

STORAGE_KEYS = {
    "type",
    "base_dir",
    "connection_string",
    "container_name",
    "storage_account_blob_url",
    "cosmosdb_account_url",
}
VECTOR_KEYS = {
    "type",
    "db_uri",
    "url",
    "api_key",
    "audience",
    "container_name",
    "database_name",
    "overwrite",
    "embeddings_schema",
}
SCHEMA_KEYS = {
    "id_field",
    "vector_field",
    "text_field",
    "attributes_field",
    "vector_size",
    "index_name",
}
LEGACY_EMBEDDINGS = {
    "entity.description": "entity_description",
    "text_unit.text": "text_unit_text",
    "community.full_content": "community_full_content",
}
"""graphrag 2.x's embedding names -> 3.3's (the table was `<container>-<name with dashes>`)."""

# Blocks whose fields kept their names (2.x field set -> copied as is); `model_id` /
# `chat_model_id` are renamed apart.
SAME_FIELDS: dict[str, set[str]] = {
    "extract_graph": {"prompt", "entity_types", "max_gleanings"},
    "summarize_descriptions": {"prompt", "max_length", "max_input_tokens"},
    "extract_claims": {"enabled", "prompt", "description", "max_gleanings"},
    "community_reports": {"graph_prompt", "text_prompt", "max_length", "max_input_length"},
    "extract_graph_nlp": {
        "normalize_edge_weights",
        "text_analyzer",
        "concurrent_requests",
        "async_mode",
    },
    "prune_graph": {
        "min_node_freq",
        "max_node_freq_std",
        "min_node_degree",
        "max_node_degree_std",
        "min_edge_weight_pct",
        "remove_ego_nodes",
        "lcc_only",
    },
    "cluster_graph": {"max_cluster_size", "use_lcc", "seed"},
    "snapshots": {"embeddings", "graphml", "raw_graph"},
    "local_search": {
        "prompt",
        "text_unit_prop",
        "community_prop",
        "conversation_history_max_turns",
        "top_k_entities",
        "top_k_relationships",
        "max_context_tokens",
    },
    "global_search": {
        "map_prompt",
        "reduce_prompt",
        "knowledge_prompt",
        "max_context_tokens",
        "data_max_tokens",
        "map_max_length",
        "reduce_max_length",
        "dynamic_search_threshold",
        "dynamic_search_keep_parent",
        "dynamic_search_num_repeats",
        "dynamic_search_use_summary",
        "dynamic_search_max_level",
    },
    "drift_search": {
        "prompt",
        "reduce_prompt",
        "data_max_tokens",
        "reduce_max_tokens",
        "reduce_temperature",
        "reduce_max_completion_tokens",
        "concurrency",
        "drift_k_followups",
        "primer_folds",
        "primer_llm_max_tokens",
        "n_depth",
        "local_search_text_unit_prop",
        "local_search_community_prop",
        "local_search_top_k_mapped_entities",
        "local_search_top_k_relationships",
        "local_search_max_data_tokens",
        "local_search_temperature",
        "local_search_top_p",
        "local_search_n",
        "local_search_llm_max_gen_tokens",
        "local_search_llm_max_gen_completion_tokens",
    },
    "basic_search": {"prompt", "k", "max_context_tokens"},
}
MODEL_ID = {
    "extract_graph": "model_id",
    "summarize_descriptions": "model_id",
    "extract_claims": "model_id",
    "community_reports": "model_id",
    "local_search": "chat_model_id",
    "global_search": "chat_model_id",
    "drift_search": "chat_model_id",
    "basic_search": "chat_model_id",
}
EMBEDDING_ID = {"local_search", "drift_search", "basic_search"}
STRATEGY = {"extract_graph", "summarize_descriptions", "extract_claims", "community_reports"}

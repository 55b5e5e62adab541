"""Chat and embedding models from a project's settings, through graphrag_llm.

Every LLM call gtog makes goes through here, so the caller gets the model's retries,
rate limits and cache from `settings.yaml`, plus the usage of that one call
(server-reported tokens where the server sends them, tokenizer counts otherwise).

- `models`: `ChatModel.chat` (one completion and its usage, also counted in the current
  `UsageMeter`, so whatever a search spent is known even when it fails), `EmbeddingModel`,
  the factories from a loaded graphrag config, `run_sync`.
- `usage`: `ChatReply`, `UsageTally`, `UsageMeter`, `metering()`, prices.
- `replies`: `ask_json`, the one structured-reply helper, and `parse_json_reply`.
- `errors`: `fatal_reason` (what no retry or later item can escape: 401/403/404) and
  `with_transient_retries` (graphrag_llm's own retry, told to retry the transient errors —
  429, 5xx, timeouts, dropped connections — that its default list skips).


Internal: not part of gtog's public API (see `gtog.eval`, `gtog.api`)."""

__all__: list[str] = []

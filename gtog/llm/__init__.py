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
"""

from gtog.llm.errors import (
    PERMANENT_ERRORS,
    TRANSIENT_ERRORS,
    ModelFatalError,
    as_fatal,
    fatal_reason,
    with_transient_retries,
)
from gtog.llm.models import (
    ChatModel,
    EmbeddingModel,
    Messages,
    chat_model_from_config,
    embedding_model_from_config,
    gated_completion,
    gated_embedding,
    reply_of,
    run_sync,
)
from gtog.llm.replies import JsonReply, ask_json, parse_json_reply
from gtog.llm.usage import (
    CUT_REASONS,
    ChatReply,
    UsageMeter,
    UsageTally,
    current_meter,
    meter_embedding,
    metering,
    model_cost_usd,
)

__all__ = [
    "CUT_REASONS",
    "PERMANENT_ERRORS",
    "TRANSIENT_ERRORS",
    "ChatModel",
    "ChatReply",
    "EmbeddingModel",
    "JsonReply",
    "Messages",
    "ModelFatalError",
    "UsageMeter",
    "UsageTally",
    "as_fatal",
    "ask_json",
    "chat_model_from_config",
    "current_meter",
    "embedding_model_from_config",
    "fatal_reason",
    "gated_completion",
    "gated_embedding",
    "meter_embedding",
    "metering",
    "model_cost_usd",
    "parse_json_reply",
    "reply_of",
    "run_sync",
    "with_transient_retries",
]

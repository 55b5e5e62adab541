"""graphrag config overrides that point a project's models at the local server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gtog.local._weights import CHAT_MODEL_NAME, EMBEDDING_DIMS, EMBEDDING_MODEL_NAME

__all__ = [
    "LOCAL_SEARCH_LIMITS",
    "local_index_overrides",
    "local_model_overrides",
    "project_model_ids",
]

REQUEST_TIMEOUT_S = 1800
DEFAULT_COMPLETION_ID = "default_completion_model"
DEFAULT_EMBEDDING_ID = "default_embedding_model"

LOCAL_SEARCH_LIMITS: dict[str, Any] = {
    "local_search": {"max_context_tokens": 2500},
    "basic_search": {"max_context_tokens": 2500, "k": 5},
    "global_search": {"max_context_tokens": 2500, "data_max_tokens": 2500},
    "drift_search": {"data_max_tokens": 2500, "concurrency": 1},
}
"""Context budgets that fit the local model's 8192-token window at ~70 prompt tokens/s."""


def _raw_settings(root: str | Path | None) -> dict[str, Any]:
    """`root`'s settings file as written (no `${ENV}` substitution); {} when there is none."""
    if root is None:
        return {}
    root = Path(root)
    for name in ("settings.yaml", "settings.yml"):
        path = root / name if root.is_dir() else root
        if path.is_file():
            from gtog._project import read_settings

            return read_settings(path).data  # (graphrag 2.x's in 3.3's shape)
    return {}


def project_model_ids(root: str | Path | None) -> tuple[list[str], list[str]]:
    """The completion and embedding model ids declared in `root`'s settings file.

    Reads the raw YAML (no `${ENV}` substitution), so it works before any key is set.
    Falls back to graphrag's default ids when there is no settings file.
    """
    data = _raw_settings(root)
    completion = list((data.get("completion_models") or {}).keys()) or [DEFAULT_COMPLETION_ID]
    embedding = list((data.get("embedding_models") or {}).keys()) or [DEFAULT_EMBEDDING_ID]
    return completion, embedding


def _model(base_url: str, name: str, api_key: str) -> dict[str, Any]:
    return {
        "type": "litellm",
        "model_provider": "openai",
        "model": name,
        "api_base": base_url,
        "api_key": api_key,
        "auth_method": "api_key",
        "api_version": None,
        "azure_deployment_name": None,
        "rate_limit": None,
        # Requests queue behind each other on 2 CPU cores; LiteLLM's default is 600 s.
        "call_args": {"timeout": REQUEST_TIMEOUT_S},
    }


def local_model_overrides(
    base_url: str,
    root: str | Path | None = None,
    *,
    completion_model_ids: list[str] | None = None,
    embedding_model_ids: list[str] | None = None,
    api_key: str | None = None,
    search_limits: bool = True,
) -> dict[str, Any]:
    """Overrides for `graphrag.config.load_config(root, cli_overrides=...)`.

    Every completion model id and every embedding model id of the project (read from
    `root`'s settings.yaml, or the ids given, or graphrag's default ids) is pointed at
    `base_url` with the local model names and a dummy key; `vector_store.vector_size`
    is set to the local embedding size (384). The project's index must have been built
    with the same embedding model (the bundled examples are). With `search_limits`,
    search context budgets are reduced to fit the local model (see LOCAL_SEARCH_LIMITS).
    """
    from gtog.local._lifecycle import LOCAL_API_KEY

    key = api_key or LOCAL_API_KEY
    found_completion, found_embedding = project_model_ids(root)
    completion_ids = completion_model_ids or found_completion
    embedding_ids = embedding_model_ids or found_embedding
    overrides: dict[str, Any] = {
        "completion_models": {
            mid: _model(base_url, CHAT_MODEL_NAME, key) for mid in completion_ids
        },
        "embedding_models": {
            mid: _model(base_url, EMBEDDING_MODEL_NAME, key) for mid in embedding_ids
        },
        "vector_store": {"vector_size": EMBEDDING_DIMS},
    }
    if search_limits:
        for section, values in LOCAL_SEARCH_LIMITS.items():
            overrides[section] = dict(values)
    return overrides


def local_index_overrides(base_url: str, root: str | Path | None = None) -> dict[str, Any]:
    """Overrides that index the project at `root` with the local server at `base_url`.

    As `local_model_overrides` (search budgets left as they are), and each completion
    model whose settings set no `max_tokens` may write `LOCAL_MAX_TOKENS` (the server's own
    cap, 1,024, cuts extraction replies short).
    """
    from gtog.local._project import LOCAL_MAX_TOKENS

    overrides = local_model_overrides(base_url, root, search_limits=False)
    declared = _raw_settings(root).get("completion_models") or {}
    for model_id, model in overrides["completion_models"].items():
        args = (declared.get(model_id) or {}).get("call_args") or {}
        if not {"max_tokens", "max_completion_tokens"} & set(args):
            model["call_args"]["max_tokens"] = LOCAL_MAX_TOKENS
    return overrides

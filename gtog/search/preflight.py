"""Before a run: can every configured model's server be reached at all?

A connection check (TCP connect to each distinct `api_base`, in parallel, a few seconds at
most) costs no tokens and turns "every call fails after its retries" into one line that
names the model id and the URL.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from gtog.errors import InputError

__all__ = ["ModelEndpoint", "check_reachable", "endpoints_of"]

DEFAULT_PORTS = {"http": 80, "https": 443}
LOCAL_CHAT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m"
"""The bundled example's chat model (served by `gtog local-model`)."""


@dataclass(frozen=True)
class ModelEndpoint:
    """A configured model and where it is served."""

    model_id: str
    model: str
    api_base: str
    settings: Path


def endpoints_of(config: object, settings: Path) -> list[ModelEndpoint]:
    """Every completion and embedding model of a graphrag config that names an `api_base`."""
    out = []
    for group in ("completion_models", "embedding_models"):
        for model_id, m in (getattr(config, group, None) or {}).items():
            if m.api_base:
                out.append(ModelEndpoint(model_id, m.model, m.api_base, settings))
    return out


def _reachable(url: str, timeout: float) -> str | None:
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        return "not a URL"
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 80)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__


def check_reachable(endpoints: list[ModelEndpoint], timeout: float = 3.0) -> None:
    """Raise InputError naming the first model whose server cannot be reached."""
    urls = sorted({e.api_base for e in endpoints})
    if not urls:
        return
    with ThreadPoolExecutor(max_workers=min(8, len(urls))) as pool:
        problems = dict(zip(urls, pool.map(lambda u: _reachable(u, timeout), urls), strict=True))
    for e in endpoints:
        why = problems.get(e.api_base)
        if why is None:
            continue
        hint = "start that server or fix api_base"
        if e.model == LOCAL_CHAT_MODEL or "127.0.0.1:8765" in e.api_base:
            hint = "this is the bundled example's local model: add --local to start it"
        raise InputError(
            f"{e.settings}: model {e.model_id!r} ({e.model}) at {e.api_base} cannot be "
            f"reached ({why.lower()}); {hint}"
        )

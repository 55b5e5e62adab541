"""Before a run: can every configured model's server be reached, every index be read?

A connection check (TCP connect to each distinct `api_base`, in parallel, a few seconds at
most) costs no tokens and turns "every call fails after its retries" into one line that
names the model id and the URL. An index check (`index_problems`: table schemas and vector
tables, no table loaded) turns "every question on that index fails" into one line naming
what is missing and the fix.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from gtog.errors import InputError

if TYPE_CHECKING:
    from gtog.project import Project

__all__ = ["INDEX_NEEDS", "ModelEndpoint", "check_reachable", "endpoints_of", "index_problems"]

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


INDEX_NEEDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "local": (
        ("entities", "relationships", "communities", "community_reports", "text_units"),
        ("entity_description",),
    ),
    "basic": (("text_units",), ("text_unit_text",)),
    "global": (("entities", "communities", "community_reports"), ()),
    "drift": (
        ("entities", "relationships", "communities", "community_reports", "text_units"),
        ("entity_description", "community_full_content"),
    ),
    "tog": (("entities", "relationships"), ()),
}
"""Registry method -> (the index tables, the vector tables) its engine cannot do without.
ToG links entities by title when it has no vectors; a method not listed is not checked."""


def index_problems(project: Project, method: str) -> list[str]:
    """`cause; fix` for each piece `method` needs that `project`'s index cannot give.

    Reads table schemas and vector-table headers only (see `gtog.compat`).
    """
    tables, vectors = INDEX_NEEDS.get(method, ((), ()))
    if not tables and not vectors:
        return []
    try:
        problems = project.compat.problems(tables, vectors)
    except InputError as exc:
        return [str(exc).removeprefix(f"{project.root}: ")]
    return [f"{cause}; fix: {fix}" for cause, fix in problems]

"""Before a run: can every configured model's server be reached, every index be read?

A connection check (TCP connect to each distinct `api_base`, in parallel, a few seconds at
most) costs no tokens and turns "every call fails after its retries" into one line that
names the model id and the URL. An index check (`index_problems`: table schemas and vector
tables, no table loaded) turns "every question on that index fails" into one line naming
what is missing and the fix. A vector-size check (`vector_size_problems`: one embedding per
embedding model, of the first question the run will search with it, handed to that search
so that no call is added) turns "every question fails to compare vectors" into one line per
vector table naming both sizes.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from gtog._errors import InputError, describe_exception
from gtog.llm._ahead import EmbeddingsAhead, model_identity
from gtog.llm._errors import ModelFatalError

if TYPE_CHECKING:
    from gtog._project import Project

__all__ = [
    "INDEX_NEEDS",
    "QUESTION_EMBEDDERS",
    "SIZE_BOUND",
    "VECTORS_READ",
    "ModelEndpoint",
    "VectorUse",
    "check_reachable",
    "endpoints_of",
    "index_problems",
    "reachable",
    "vector_size_problems",
]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

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


def reachable(url: str, timeout: float) -> str | None:
    """None when a TCP connection to `url`'s host and port opens within `timeout`, else why
    not (`connection refused`, `name or service not known`, ...)."""
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
        problems = dict(zip(urls, pool.map(lambda u: reachable(u, timeout), urls), strict=True))
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


VECTORS_READ: dict[str, tuple[str, ...]] = {
    "local": ("entity_description",),
    "basic": ("text_unit_text",),
    "drift": ("entity_description", "community_full_content"),
    "tog": ("entity_description", "text_unit_text"),
}
"""Registry method -> the vector tables its query embeddings are compared with (ToG's:
when the index has them)."""

QUESTION_EMBEDDERS = frozenset({"local", "basic"})
"""Methods whose search embeds the question itself: the check's embedding is theirs."""

SIZE_BOUND = frozenset({"local", "basic", "drift"})
"""Methods whose every search fails when the sizes differ (numpy cannot compare the
vectors). ToG leaves vectors of another size out, recording a fallback: its tables are
checked beside one of these, never with a call of their own."""


@dataclass(frozen=True)
class VectorUse:
    """One index's vector tables as some methods read them with one embedding model."""

    label: str
    """The index as lines name it (`index 'k' (path)`)."""
    project: Project
    model_id: str
    methods: tuple[str, ...]
    """Registry methods (`local`, ...), in the run's order."""
    question: str
    """The first question the run searches on this index with these methods."""
    also: tuple[str, ...] = ()
    """The other questions the run's first round searches on this index with a method that
    embeds the question itself, with this model: embedded with the check's, at once."""


def _tables(use: VectorUse) -> dict[str, tuple[int, list[str]]]:
    """The stored vector tables `use` reads: the vector size each holds, and the methods
    that read it (LanceDB on disk only: elsewhere the size is not known without reading)."""
    out: dict[str, tuple[int, list[str]]] = {}
    for method in use.methods:
        for embedding in VECTORS_READ.get(method, ()):
            table = use.project.compat.vectors.get(embedding)
            if table is not None and table.missing is None and table.dims is not None:
                out.setdefault(table.schema.index_name, (table.dims, []))[1].append(method)
    return out


async def vector_size_problems(uses: list[VectorUse]) -> tuple[list[str], EmbeddingsAhead]:
    """One line per vector table whose size differs from what its embedding model returns,
    and the embeddings made to find out (for the searches to take, see `gtog.llm._ahead`).

    One embedding per distinct model (provider, model, endpoint, call args) that a
    `SIZE_BOUND` method uses, of the first question of a method that embeds the question
    itself (then the check adds no call) or else of DRIFT's first (one call more, spared
    every question failing). A model that cannot be asked is not checked here (the run
    reports its error as usual). The first round's other questions (`VectorUse.also`) are
    embedded at the same time: the run's first calls are all in flight at once, as they
    would be without the check, instead of one, then the rest.
    """
    from gtog.llm._models import embedding_model_from_config

    ahead = EmbeddingsAhead()
    groups: dict[str, list[VectorUse]] = {}
    for use in uses:
        if _tables(use):
            config = use.project.config.get_embedding_model_config(use.model_id)
            groups.setdefault(model_identity(config), []).append(use)
    lines = []
    for group in groups.values():
        bound = [u for u in group if SIZE_BOUND & set(u.methods)]
        if not bound:
            continue
        asker = next((u for u in group if QUESTION_EMBEDDERS & set(u.methods)), bound[0])
        model = embedding_model_from_config(asker.project.config, asker.model_id)
        texts = list(dict.fromkeys([asker.question, *(q for u in group for q in u.also)]))
        replies = await asyncio.gather(
            *(model.embedding.embedding_async(input=[text]) for text in texts),
            return_exceptions=True,
        )
        fatal = next((r for r in replies if isinstance(r, ModelFatalError)), None)
        if fatal is not None:
            raise fatal  # a refused key: the run cannot go on (one line, see `as_fatal`)
        response = replies[0]
        try:
            if isinstance(response, BaseException):
                raise response
            size = len(response.data[0].embedding)
        except Exception as exc:
            logger.warning(
                "vector sizes not checked for embedding model %r: %s",
                asker.model_id,
                describe_exception(exc),
            )
            continue
        for text, reply in zip(texts, replies, strict=True):
            if not isinstance(reply, BaseException):  # (a failed one: its search asks again)
                ahead.keep(model.config, text, reply)
        for use in group:
            config = use.project.config.get_embedding_model_config(use.model_id)
            for name, (dims, methods) in _tables(use).items():
                if dims == size:
                    continue
                root = use.project.root
                lines.append(
                    f"{use.label}: vector table {name} holds {dims}-d vectors, but embedding "
                    f"model {use.model_id!r} ({config.model_provider}/{config.model}) returns "
                    f"{size}-d vectors ({', '.join(methods)}); fix: configure the "
                    f"embedding model the index was built with (one returning {dims}-d "
                    f"vectors), or re-index with `gtog index --root {root}`"
                )
    return lines, ahead

"""Before indexing: can every model of the project be asked at all? One line if not.

graphrag checks its models at the start of `index` with each model's own retries (minutes
against a server that is not there) and then prints the provider's error with no hint.
`check_models` asks each model once, in parallel, with a short timeout and no retry (one
one-token completion, one one-word embedding, through graphrag_llm), after a check that
needs no request at all (a key still `<API_KEY>` or empty), and turns a failure into one
line naming the settings file, the model, its endpoint and the fix.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import InputError, describe_exception
from gtog.llm._errors import fatal_reason
from gtog.search._preflight import reachable

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.config import ModelConfig

__all__ = ["DEFAULT_ENDPOINTS", "PROBE_PROMPT", "PROBE_TIMEOUT_S", "check_models", "endpoint_of"]

PROBE_TIMEOUT_S = 15.0
"""Seconds a model has to answer the one-token request (a connection error comes at once)."""
DEFAULT_ENDPOINTS = {"openai": "https://api.openai.com/v1"}
"""Where a provider is asked when the settings name no `api_base`."""
PROBE_PROMPT = "Reply with the word OK."
"""What the one-token request asks (a completion model's answer is not read)."""
PLACEHOLDER_KEYS = frozenset({"", "<API_KEY>"})
"""Keys that are no key: empty, or the placeholder `graphrag init` writes into `.env`."""
LOCAL_MARKS = ("qwen2.5-coder-1.5b-instruct-q4_k_m", "all-minilm-l6-v2", "127.0.0.1:8765")
"""A model entry naming one of these is the bundled local model (`gtog local-model`)."""
_ENV = re.compile(r"\$\{(\w+)\}")


def endpoint_of(model: ModelConfig) -> str:
    """The URL the model is asked at: `api_base`, else the provider's default."""
    if model.api_base:
        return str(model.api_base)
    return DEFAULT_ENDPOINTS.get(model.model_provider, f"{model.model_provider}'s default endpoint")


def _raw_key(settings: Path, group: str, model_id: str) -> str | None:
    """The model's `api_key` as written in the settings file (`${GRAPHRAG_API_KEY}`)."""
    from gtog._errors import InputError
    from gtog._project import read_settings

    try:
        data = read_settings(settings).data  # (graphrag 2.x's in 3.3's shape)
        value = ((data.get(group) or {}).get(model_id) or {}).get("api_key")
    except (InputError, AttributeError):
        return None
    return str(value) if value is not None else None


class _Model:
    """One model to check, and how to word a line about it."""

    def __init__(self, group: str, model_id: str, config: ModelConfig, settings: Path) -> None:
        self.group, self.model_id, self.config, self.settings = group, model_id, config, settings

    @property
    def local(self) -> bool:
        text = f"{self.config.model} {self.config.api_base or ''}".lower()
        return any(mark in text for mark in LOCAL_MARKS)

    def line(self, problem: str, fix: str) -> str:
        c = self.config
        return (
            f"{self.settings}: model {self.model_id!r} ({c.model_provider}/{c.model}) at "
            f"{endpoint_of(c)} {problem}; fix: {fix}"
        )

    def key_fix(self) -> str:
        root = self.settings.parent
        raw = _raw_key(self.settings, self.group, self.model_id) or ""
        variable = _ENV.search(raw)
        where = (
            f"set {variable.group(1)} in {root / '.env'}"
            if variable
            else f"set api_key under {self.group}.{self.model_id} in {self.settings.name}"
        )
        return f"{where}, or add --local to use the bundled local model instead"

    def reach_fix(self) -> str:
        if self.local:
            return (
                "this is the bundled local model: add --local (it starts the model server), or "
                "run `gtog local-model serve` first"
            )
        return "check api_base and the network, or add --local to use the bundled local model"


def _probe_config(model: ModelConfig, timeout: float, chat: bool) -> ModelConfig:
    """`model` for one quick request: no retry, a short timeout, one output token."""
    args: dict[str, Any] = {**(model.call_args or {}), "timeout": timeout, "max_retries": 0}
    if chat:
        args.pop("max_completion_tokens", None)
        args["max_tokens"] = 1
    return model.model_copy(update={"retry": None, "call_args": args})


async def _ask(m: _Model, timeout: float) -> tuple[str | None, int | None]:
    """(None, vector size for an embedding model) when the model answered, else the one
    line saying why not."""
    key = m.config.api_key
    if m.config.auth_method == "api_key" and (key is None or key.strip() in PLACEHOLDER_KEYS):
        return m.line("has no API key", m.key_fix()), None
    chat = m.group == "completion_models"
    probe = _probe_config(m.config, timeout, chat)
    try:
        if chat:
            from graphrag_llm.completion import create_completion

            model = create_completion(probe)
            await asyncio.wait_for(model.completion_async(messages=PROBE_PROMPT), timeout + 5)
            return None, None
        from graphrag_llm.embedding import create_embedding

        embedder = create_embedding(probe)
        response = await asyncio.wait_for(embedder.embedding_async(input=["OK"]), timeout + 5)
    except Exception as exc:
        return _explain(m, exc, timeout), None
    return None, len(response.first_embedding)


def _explain(m: _Model, exc: BaseException, timeout: float) -> str:
    status = fatal_reason(exc)
    said = describe_exception(exc, 160, with_type=False)
    if status in (401, 403):
        return m.line(f"refused the key ({status}: {said})", m.key_fix())
    if status == 404:
        return m.line(
            f"says the model does not exist ({said})",
            f"check model and api_base under {m.group}.{m.model_id}",
        )
    text = f"{type(exc).__name__} {exc}".lower()
    if isinstance(exc, TimeoutError) or "timeout" in text or "timed out" in text:
        return m.line(f"did not answer within {timeout:g} s", m.reach_fix())
    if "connection" in text:
        url = endpoint_of(m.config)
        why = reachable(url, 3.0) if url.startswith("http") else None
        return m.line(f"cannot be reached ({(why or 'connection error').lower()})", m.reach_fix())
    return m.line(
        f"failed a one-token test request ({said})",
        f"check the settings of {m.group}.{m.model_id}",
    )


async def check_models(
    config: GraphRagConfig, settings: Path, *, timeout: float = PROBE_TIMEOUT_S
) -> dict[str, int]:
    """Ask every completion and embedding model of `config` once (in parallel); raise
    InputError with one line for the first that cannot answer, in the settings' order.

    Returns each embedding model id's vector size.
    """
    models = [
        _Model(group, model_id, model, settings)
        for group in ("completion_models", "embedding_models")
        for model_id, model in (getattr(config, group, None) or {}).items()
    ]
    answers = await asyncio.gather(*(_ask(m, timeout) for m in models))
    for problem, _ in answers:
        if problem is not None:
            raise InputError(problem)
    return {m.model_id: dims for m, (_, dims) in zip(models, answers, strict=True) if dims}

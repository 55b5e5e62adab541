"""Chat and embedding models from a project's settings, through graphrag_llm.

Every call goes through the model's graphrag_llm completion or embedding, so the caller
gets the model's retries, rate limits and cache from `settings.yaml`, and the usage of the
call (server-reported tokens where the server sends them, tokenizer counts otherwise) is
counted in the current meter.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from gtog.llm._ahead import take_ahead
from gtog.llm._budget import charge
from gtog.llm._cache import key_creator
from gtog.llm._errors import as_fatal, transient
from gtog.llm._usage import ChatReply, current_meter, meter_embedding, model_cost_usd

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import LLMEmbedding

__all__ = [
    "ChatModel",
    "EmbeddingModel",
    "Messages",
    "chat_model_from_config",
    "embedding_model_from_config",
    "gated_completion",
    "gated_embedding",
    "reply_of",
    "run_sync",
]

Messages = str | list[dict[str, Any]]

_OPENAI_WIRE = {"openai", "azure", "hosted_vllm", "lm_studio", "openai_like", "custom_openai"}
"""Providers whose requests are OpenAI chat-completions bodies (extra_body is merged in)."""
_GOOGLE_WIRE = {"gemini", "vertex_ai", "vertex_ai_beta"}
"""Providers whose requests are Gemini `generateContent` bodies."""


def _supports_schema(config: ModelConfig) -> bool:
    try:
        import litellm

        return bool(
            litellm.supports_response_schema(
                model=config.model, custom_llm_provider=config.model_provider
            )
        )
    except Exception:  # LiteLLM raises for models it does not know
        return False


class ChatModel:
    """A graphrag_llm completion model that reports the usage of every call."""

    def __init__(self, completion: LLMCompletion, config: ModelConfig, model_id: str) -> None:
        self.completion = completion
        self.config = config
        self.model_id = model_id

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer (None for a model without a graphrag_llm completion)."""
        return getattr(getattr(self, "completion", None), "tokenizer", None)

    @property
    def name(self) -> str:
        """`provider/model`, safe to log (never includes credentials)."""
        return f"{self.config.model_provider}/{self.config.model}"

    def _format_args(
        self, args: dict[str, Any], json_mode: bool, schema: type[BaseModel] | None
    ) -> None:
        if not json_mode and schema is None:
            return
        if self.config.model_provider in _OPENAI_WIRE:
            # graphrag_llm's `response_format_json_object` flag is lost on the async path
            # (it only applies when no `response_format` key is present, and one always
            # is), so send the OpenAI field in the request body ourselves.
            fmt: dict[str, Any] = {"type": "json_object"}
            if schema is not None and _supports_schema(self.config):
                fmt = {
                    "type": "json_schema",
                    "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
                }
            extra = dict(args.get("extra_body") or {})
            extra.setdefault("response_format", fmt)
            args["extra_body"] = extra
        elif self.config.model_provider in _GOOGLE_WIRE:
            # the same loss: Gemini's own field, which LiteLLM puts in generationConfig
            args.setdefault("response_mime_type", "application/json")
        else:
            args["response_format_json_object"] = True

    async def chat(
        self,
        messages: Messages,
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
        schema: type[BaseModel] | None = None,
        category: str | None = None,
        **kwargs: Any,
    ) -> ChatReply:
        """Send one non-streamed completion and return its text and usage.

        `json_mode` asks for JSON output; with `schema`, for that schema where the provider
        supports structured output. The reply is counted in the current `UsageMeter` under
        `category` (default: the model id); a failure is recorded there and raised (as
        `ModelFatalError` when no retry can fix it).
        """
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        args: dict[str, Any] = {**self.config.call_args, **kwargs}
        if temperature is not None:
            args["temperature"] = temperature
        if max_tokens is not None:
            args["max_completion_tokens"] = max_tokens
        self._format_args(args, json_mode, schema)
        _, reply = await self.complete(messages, category=category, **args)
        return reply

    async def complete(
        self, messages: list[dict[str, Any]], *, category: str | None = None, **args: Any
    ) -> tuple[Any, ChatReply]:
        """One call with graphrag_llm's own arguments: the raw response and its usage.

        The reply is counted in the current `UsageMeter`; a failure is recorded there and
        raised (as `ModelFatalError` when no retry can fix it).
        """
        meter = current_meter()
        try:
            response = await self.completion.completion_async(messages=messages, **args)
        except Exception as exc:
            error = as_fatal(exc, self.model_id, self.config)
            if meter is not None:
                meter.errors.append(error)
            if error is exc:
                raise
            raise error from exc
        reply = reply_of(response, messages, self)
        charge(1, reply.prompt_tokens + reply.output_tokens, reply.cost_usd, cached=reply.cached)
        if meter is not None:
            meter.tally.add(category or self.model_id, reply)
            meter.finishes.append((category or self.model_id, reply.finish_reason))
        return response, reply

    def count_tokens(self, text: str) -> int:
        """Tokens in `text` by the model's tokenizer."""
        return len(self.completion.tokenizer.encode(text))


def reply_of(response: Any, messages: list[dict[str, Any]], model: ChatModel) -> ChatReply:
    """Text and usage of a non-streamed response (tokenizer counts when the server sent none)."""
    text = response.content or ""
    usage = getattr(response, "usage", None)
    if usage is not None and (usage.prompt_tokens or usage.completion_tokens):
        prompt_tokens = int(usage.prompt_tokens or 0)
        output_tokens = int(usage.completion_tokens or 0)
        reported = True
    else:
        prompt_text = "\n".join(str(m.get("content", "")) for m in messages)
        prompt_tokens = model.count_tokens(prompt_text)
        output_tokens = model.count_tokens(text)
        reported = False
    choices = getattr(response, "choices", None) or []
    finish = getattr(choices[0], "finish_reason", None) if choices else None
    return ChatReply(
        text=text,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        usage_reported=reported,
        cost_usd=model_cost_usd(model.config, prompt_tokens, output_tokens),
        finish_reason=str(finish) if finish is not None else None,
        cached=bool(getattr(response, "gtog_cached", False)),
    )


async def _stop_litellm_worker() -> None:
    """Stop LiteLLM's logging worker before its loop closes (else: "Task was destroyed").

    Nothing to stop (and nothing imported) when LiteLLM was never loaded.
    """
    if "litellm" not in sys.modules:
        return
    try:
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER
    except ImportError:  # pragma: no cover - older LiteLLM has no worker
        return
    with contextlib.suppress(Exception):  # shutting down: nothing to do with a failure
        await GLOBAL_LOGGING_WORKER.stop()


def run_sync(awaitable: Any) -> Any:
    """`asyncio.run(awaitable)`, then LiteLLM's background worker is stopped cleanly.

    In the main thread, Ctrl-C (and SIGTERM) cancel the work inside the loop, so its
    `finally` blocks run in order, and then raise `KeyboardInterrupt`. (graphrag_llm applies
    nest_asyncio2, whose `asyncio.run` leaves SIGINT to land in whatever frame is running,
    perhaps the event loop's own, skipping the coroutines' clean-up.) A second Ctrl-C stops
    at once.
    """
    interrupted = False

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        handled = _catch_interrupts()

        def interrupt() -> None:
            nonlocal interrupted
            interrupted = True
            for signum in handled:  # the next one is not caught: it stops at once
                loop.remove_signal_handler(signum)
            if task is not None:
                task.cancel()

        for signum in handled:
            loop.add_signal_handler(signum, interrupt)
        try:
            return await awaitable
        except asyncio.CancelledError:
            if not interrupted:
                raise
            return None  # raised below, outside the loop (no "exception never retrieved")
        finally:
            for signum in handled:
                loop.remove_signal_handler(signum)
            await _stop_litellm_worker()

    result = asyncio.run(main())
    if interrupted:
        raise KeyboardInterrupt
    return result


def _catch_interrupts() -> list[int]:
    """The signals `run_sync` turns into a cancel: those still at Python's default, in the
    main thread (a caller's own handlers are left alone)."""
    if threading.current_thread() is not threading.main_thread():
        return []
    defaults = {signal.SIGINT: signal.default_int_handler, signal.SIGTERM: signal.SIG_DFL}
    return [s for s, default in defaults.items() if signal.getsignal(s) is default]


class EmbeddingModel:
    """A graphrag_llm embedding model with an async batch call (counted in the meter)."""

    def __init__(self, embedding: LLMEmbedding, config: ModelConfig, model_id: str) -> None:
        self.embedding = embedding
        self.config = config
        self.model_id = model_id

    async def embed(self, texts: list[str]) -> list[list[float]]:
        """Embed `texts` in one request (order preserved)."""
        if not texts:
            return []
        response = take_ahead(self.config, texts)  # fetched by the run's preflight
        try:
            if response is None:
                response = await self.embedding.embedding_async(input=texts)
        except Exception as exc:
            error = as_fatal(exc, self.model_id, self.config)
            if error is exc:
                raise
            raise error from exc
        meter_embedding(response, self.config, texts, getattr(self.embedding, "tokenizer", None))
        data = sorted(response.data, key=lambda d: d.index)
        return [list(d.embedding) for d in data]

    def embed_sync(self, texts: list[str]) -> list[list[float]]:
        """Blocking variant of `embed`."""
        return run_sync(self.embed(texts))


class _BuiltOnUse:
    """A model client made on its first use: graphrag_llm's factories import LiteLLM and
    the providers' clients (seconds), which a run with nothing left to call never needs."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._made: Any = None
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        made = self._made
        if made is None:
            with self._lock:
                if self._made is None:
                    self._made = self._build()
                made = self._made
        return getattr(made, name)


def gated_completion(model_config: ModelConfig, model_id: str | None = None) -> LLMCompletion:
    """graphrag_llm's completion model for `model_config`, its requests passing the call
    gate (the run's cache and limits, `gtog.llm._gate`), an identical request in flight
    shared (`gtog.llm._flights`)."""
    from graphrag_llm.completion import create_completion

    from gtog.llm._flights import SharedModel
    from gtog.llm._gate import CALL_GATE

    inner = create_completion(
        model_config, cache=CALL_GATE, cache_key_creator=key_creator("chat", model_config)
    )
    return cast("LLMCompletion", SharedModel(inner, model_config, model_id))


def gated_embedding(model_config: ModelConfig, model_id: str | None = None) -> LLMEmbedding:
    """graphrag_llm's embedding model for `model_config`, through the call gate, an
    identical request in flight shared."""
    from graphrag_llm.embedding import create_embedding

    from gtog.llm._flights import SharedModel
    from gtog.llm._gate import CALL_GATE

    inner = create_embedding(
        model_config, cache=CALL_GATE, cache_key_creator=key_creator("embedding", model_config)
    )
    return cast("LLMEmbedding", SharedModel(inner, model_config, model_id))


def chat_model_from_config(config: GraphRagConfig, model_id: str) -> ChatModel:
    """The completion model `model_id` of a loaded graphrag config (transient errors retried)."""
    model_config = transient(config.get_completion_model_config(model_id))
    completion = _BuiltOnUse(lambda: gated_completion(model_config, model_id))
    return ChatModel(cast("LLMCompletion", completion), model_config, model_id)


def embedding_model_from_config(config: GraphRagConfig, model_id: str) -> EmbeddingModel:
    """The embedding model `model_id` of a loaded graphrag config (transient errors retried)."""
    model_config = transient(config.get_embedding_model_config(model_id))
    embedding = _BuiltOnUse(lambda: gated_embedding(model_config, model_id))
    return EmbeddingModel(cast("LLMEmbedding", embedding), model_config, model_id)

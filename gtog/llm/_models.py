"""Chat and embedding models from a project's settings, through graphrag_llm.

Every call goes through the model's graphrag_llm completion or embedding, so the caller
gets the model's retries, rate limits and cache from `settings.yaml`, and the usage of the
call (server-reported tokens where the server sends them, tokenizer counts otherwise) is
counted in the current meter.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, cast

from pydantic import BaseModel

from gtog._hashing import stable_hash
from gtog._internals import is_native_loop, native_event_loop
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
    "import_clients",
    "reply_of",
    "run_sync",
    "sharing_models",
]

Messages = str | list[dict[str, Any]]

_OPENAI_WIRE = {"openai", "azure", "hosted_vllm", "lm_studio", "openai_like", "custom_openai"}
"""Providers whose requests are OpenAI chat-completions bodies (extra_body is merged in)."""
_GOOGLE_WIRE = {"gemini", "vertex_ai", "vertex_ai_beta"}
"""Providers whose requests are Gemini `generateContent` bodies."""


def _supports_schema(config: ModelConfig) -> bool:
    return _supports_response_schema(config.model, config.model_provider)


@functools.lru_cache(maxsize=64)
def _supports_response_schema(model: str, provider: str) -> bool:
    """LiteLLM's answer, once per model (it looks the model up in its tables: ~0.3 ms)."""
    try:
        import litellm

        return bool(litellm.supports_response_schema(model=model, custom_llm_provider=provider))
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


def _litellm_tasks(tasks: Any) -> list[asyncio.Task[Any]]:
    """LiteLLM's logging-worker tasks among `tasks` (its worker loop and the log tasks it
    runs)."""
    return [t for t in tasks if _coro_name(t).startswith("LoggingWorker.")]


def _coro_name(task: asyncio.Task[Any]) -> str:
    return str(getattr(task.get_coro(), "__qualname__", ""))


def _settle_default_loop() -> None:
    """Stop LiteLLM's logging worker where an earlier `asyncio.run` in this thread left it
    (graphrag_llm's nest_asyncio2 keeps that loop open), before `run_sync`'s loop starts.

    LiteLLM moves its worker to whichever loop logs next and drops the old task without
    cancelling it, which then says "Task was destroyed but it is pending" when collected.
    """
    if "litellm" not in sys.modules:
        return
    with contextlib.suppress(Exception):  # (no default loop, a loop in use: nothing to do)
        loop = asyncio.get_event_loop_policy().get_event_loop()
        if loop.is_running() or loop.is_closed():
            return
        workers = _litellm_tasks(asyncio.all_tasks(loop))
        for task in workers:
            task.cancel()
        if workers:
            loop.run_until_complete(asyncio.gather(*workers, return_exceptions=True))


async def _settle_loop(own: bool) -> None:
    """On run_sync's `own` loop, cancel its other tasks; then stop LiteLLM's logging worker
    if it runs on this loop, before the loop closes (else: "Task was destroyed but it is
    pending" at exit).

    In that order: a call cancelled here logs its failure through LiteLLM, which starts the
    worker again. A caller's loop (a nested run_sync) keeps its tasks, among them the one
    waiting for this. Nothing to stop (and nothing imported) when LiteLLM was never loaded.
    """
    leftovers: list[asyncio.Task[Any]] = []
    if own:
        current = asyncio.current_task()
        leftovers = [task for task in asyncio.all_tasks() if task is not current]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)
    # (the worker cancelled among the leftovers, or started again by a cancelled call's log)
    worker_here = bool(_litellm_tasks([*leftovers, *asyncio.all_tasks()]))
    if "litellm" in sys.modules and (worker_here or not own):
        from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

        with contextlib.suppress(Exception):  # shutting down: nothing to do with a failure
            await GLOBAL_LOGGING_WORKER.stop()


def run_sync(awaitable: Any) -> Any:
    """`asyncio.run(awaitable)`, then the loop's leftover tasks are cancelled and LiteLLM's
    background worker is stopped cleanly.

    The loop makes asyncio's C tasks and futures (`gtog._internals.native_event_loop`: once
    graphrag_llm is imported, `asyncio.run` would make pure-Python ones, slower by about a
    quarter).

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
            await _settle_loop(own=running is None)

    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is not None and is_native_loop(running):
        if asyncio.iscoroutine(awaitable):
            awaitable.close()  # (never awaited: no warning about it)
        raise RuntimeError("run_sync inside run_sync's own loop: await the coroutine instead")
    if running is None:
        _settle_default_loop()
        loop = native_event_loop()
        try:
            result = loop.run_until_complete(main())
        finally:
            try:
                loop.run_until_complete(loop.shutdown_asyncgens())
            finally:
                loop.close()
    else:  # called inside a running loop (graphrag_llm's nest_asyncio2 allows it)
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


CLIENT_MODULES = (
    "litellm",
    "graphrag_llm.completion",
    "graphrag_llm.embedding",
    "graphrag_llm.completion.lite_llm_completion",
    "graphrag_llm.embedding.lite_llm_embedding",
    "graphrag_llm.tokenizer.lite_llm_tokenizer",
    "graphrag_llm.metrics.default_metrics_processor",
    "graphrag_llm.metrics.log_metrics_writer",
    "graphrag_llm.metrics.memory_metrics_store",
    "graphrag_llm.model_cost_registry",
    "openai.resources.chat",
    "openai.resources.embeddings",
    "litellm._service_logger",
    "litellm.integrations.prometheus_services",
    "litellm.proxy.spend_tracking.savings",
    "litellm.llms.litellm_proxy.chat.transformation",
    "litellm.llms.openai_like.dynamic_config",
    "litellm.llms.openai.chat.gpt_audio_transformation",
    "litellm.llms.vertex_ai.vertex_ai_partner_models.anthropic.transformation",
    "litellm.proxy.openai_files_endpoints.common_utils",
)
"""What a run's first model requests import: LiteLLM, graphrag_llm's factories and the
LiteLLM models they make on the first use of a model (with azure.identity: ~0.1 s), the
openai SDK's request modules (its client imports them on the first chat and embedding
request) and the modules LiteLLM imports on its first request and reply (its service
logger, ~8 ms on the event loop otherwise, its providers' configurations); a name LiteLLM
no longer has is skipped. `tests/integration/test_first_calls_import_nothing.py` checks
that a first chat and embedding call import nothing more."""


def import_clients() -> None:
    """Import `CLIENT_MODULES` (blocking, seconds on 2 cores: call it in a worker thread
    before a run's first request, so the event loop never stalls on them with calls in
    flight)."""
    import importlib

    for name in CLIENT_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


_shared: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "gtog_shared_models", default=None
)


class _BuiltOnUse:
    """A model client made on its first use: graphrag_llm's factories import LiteLLM and
    the providers' clients (seconds), which a run with nothing left to call never needs.
    Made in the `sharing_models` block it was created in, if any (it is used after it)."""

    def __init__(self, build: Callable[[], Any]) -> None:
        self._build = build
        self._made: Any = None
        self._lock = threading.Lock()
        self._sharing = _shared.get()

    def __getattr__(self, name: str) -> Any:
        made = self._made
        if made is None:
            with self._lock:
                if self._made is None:
                    token = _shared.set(self._sharing)
                    try:
                        self._made = self._build()
                    finally:
                        _shared.reset(token)
                made = self._made
        return getattr(made, name)


@contextlib.contextmanager
def sharing_models(made: dict[str, Any]) -> Iterator[None]:
    """Inside the block, `gated_completion` and `gated_embedding` make one graphrag_llm model
    per model entry (entries alike in every setting: provider, model, endpoint, key,
    retries, rate limit, call arguments) and hand it out again, kept in `made`.

    A run's engines are built index by index, each by graphrag's factories from the index's
    settings; without this each index and method had models of its own: a rate limit of
    the settings held per engine (two indexes open at once, or local and basic together,
    sent twice its requests), and every index built its models again (~10 ms each). A
    run's judges are made in the same block (`prepare`): a judge that is a search's model
    entry shares its rate limit. A model made on first use (`chat_model_from_config`) is
    made in the block it was created in.
    """
    token = _shared.set(made)
    try:
        yield
    finally:
        _shared.reset(token)


_making = threading.RLock()


def _made_once(kind: str, model_config: ModelConfig, make: Callable[[], Any]) -> Any:
    """`make()`, or the model made for these settings already in a `sharing_models` block.
    (The key is a hash of every setting: the settings hold the model's key.)"""
    made = _shared.get()
    if made is None:
        return make()
    key = f"{kind} {stable_hash(model_config.model_dump(), length=64)}"
    with _making:  # (the engines' thread and the run's loop may make one at once)
        model = made.get(key)
        if model is None:
            model = made[key] = make()
    return model


def gated_completion(model_config: ModelConfig, model_id: str | None = None) -> LLMCompletion:
    """graphrag_llm's completion model for `model_config`, its requests passing the call
    gate (the run's cache and limits, `gtog.llm._gate`), an identical request in flight
    shared (`gtog.llm._flights`); in a `sharing_models` block, one per model entry."""
    from graphrag_llm.completion import create_completion

    from gtog.llm._flights import SharedModel
    from gtog.llm._gate import CALL_GATE

    inner = _made_once(
        "chat",
        model_config,
        lambda: create_completion(
            model_config, cache=CALL_GATE, cache_key_creator=key_creator("chat", model_config)
        ),
    )
    return cast("LLMCompletion", SharedModel(inner, model_config, model_id))


def gated_embedding(model_config: ModelConfig, model_id: str | None = None) -> LLMEmbedding:
    """graphrag_llm's embedding model for `model_config`, through the call gate, an
    identical request in flight shared; in a `sharing_models` block, one per model entry."""
    from graphrag_llm.embedding import create_embedding

    from gtog.llm._flights import SharedModel
    from gtog.llm._gate import CALL_GATE

    inner = _made_once(
        "embedding",
        model_config,
        lambda: create_embedding(
            model_config,
            cache=CALL_GATE,
            cache_key_creator=key_creator("embedding", model_config),
        ),
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

"""Chat and embedding models from a project's settings, through graphrag_llm.

Every LLM call gtog makes goes through here, so the caller gets the model's retries,
rate limits and cache from `settings.yaml`, plus the usage of that one call
(server-reported tokens where the server sends them, tokenizer counts otherwise).

- `ChatModel.chat`: one completion and its usage; also counted in the current
  `UsageMeter` (`metering()`), so whatever a search spent is known even when it fails.
- `ask_json`: the one structured-reply helper. It asks for JSON (the provider's
  structured output where LiteLLM knows it supports a schema, else JSON mode), reads the
  reply strictly against a pydantic schema, asks once more if that fails, and returns an
  explicit error instead of a value when it still fails. JSON repair may fix syntax but
  never supplies a value that the reply does not state.
- `fatal_reason`: which provider errors no retry or later item can escape (401/403/404).
- `with_transient_retries`: graphrag_llm's own retry, told to retry the transient errors
  (429, 5xx, timeouts, dropped connections) that its default list skips.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

from gtog.errors import FatalRunError

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.completion import LLMCompletion
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.embedding import LLMEmbedding

__all__ = [
    "CUT_REASONS",
    "PERMANENT_ERRORS",
    "TRANSIENT_ERRORS",
    "ChatModel",
    "ChatReply",
    "EmbeddingModel",
    "JsonReply",
    "ModelFatalError",
    "UsageMeter",
    "UsageTally",
    "as_fatal",
    "ask_json",
    "chat_model_from_config",
    "current_meter",
    "embedding_model_from_config",
    "fatal_reason",
    "meter_embedding",
    "metering",
    "model_cost_usd",
    "parse_json_reply",
    "reply_of",
    "run_sync",
    "with_transient_retries",
]

Messages = str | list[dict[str, Any]]
T = TypeVar("T", bound=BaseModel)

_OPENAI_WIRE = {"openai", "azure", "hosted_vllm", "lm_studio", "openai_like", "custom_openai"}
"""Providers whose requests are OpenAI chat-completions bodies (extra_body is merged in)."""

TRANSIENT_ERRORS = (
    "RateLimitError",  # 429
    "InternalServerError",  # 500
    "BadGatewayError",  # 502
    "ServiceUnavailableError",  # 503
    "Timeout",  # 408, 504, a request that timed out
    "APIConnectionError",  # a dropped or refused connection
)
"""LiteLLM's names for the errors a later attempt can escape: these are retried."""

PERMANENT_ERRORS = (
    "BadRequestError",
    "UnsupportedParamsError",
    "ContextWindowExceededError",
    "ContentPolicyViolationError",
    "ImageFetchError",
    "InvalidRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "UnprocessableEntityError",
    "APIError",
    "APIResponseValidationError",
    "BudgetExceededError",
)
"""graphrag_llm's default `exceptions_to_skip` without the transient errors: these fail at
the first attempt (401/403/404 then stop the run, see `fatal_reason`)."""

_FATAL_STATUS = {
    401: "the key was refused: check api_key (or the environment variable it names)",
    403: "the key may not use this model: check the key's permissions or the model",
    404: "the model or endpoint does not exist: check model and api_base",
}


@dataclass(frozen=True)
class ChatReply:
    """One completion: its text and what it cost."""

    text: str
    prompt_tokens: int
    output_tokens: int
    usage_reported: bool
    """True when the token counts came from the server, False when estimated locally."""
    cost_usd: float | None
    finish_reason: str | None = None
    """Why the model stopped: `stop`, `length` (cut at max_tokens), `content_filter`, ..."""

    @property
    def cut(self) -> str | None:
        """Why the reply is incomplete (`length`, `content_filter`), else None."""
        return self.finish_reason if self.finish_reason in CUT_REASONS else None


CUT_REASONS = {
    "length": "cut at max_tokens",
    "content_filter": "filtered by the provider's content filter",
}
"""Finish reasons of a reply that is not the model's whole answer, and what they mean."""


@dataclass
class UsageTally:
    """Calls and tokens split by category (e.g. a search stage or a judge metric)."""

    llm_calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    prompt_tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    output_tokens: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cost_usd: float | None = 0.0
    """USD of every chat and embedding call; None once any call's price is unknown."""
    embedding_calls: int = 0
    embedding_tokens: int = 0

    def _spend(self, cost: float | None) -> None:
        if cost is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += cost

    def add(self, category: str, reply: ChatReply) -> None:
        """Count one reply under `category`."""
        self.llm_calls[category] += 1
        self.prompt_tokens[category] += reply.prompt_tokens
        self.output_tokens[category] += reply.output_tokens
        self._spend(reply.cost_usd)

    def add_embedding(self, tokens: int, cost: float | None) -> None:
        """Count one embedding request of `tokens` input tokens."""
        self.embedding_calls += 1
        self.embedding_tokens += tokens
        self._spend(cost)

    @property
    def total_calls(self) -> int:
        """All calls over every category."""
        return sum(self.llm_calls.values())

    @property
    def total_prompt_tokens(self) -> int:
        """All prompt tokens over every category."""
        return sum(self.prompt_tokens.values())

    @property
    def total_output_tokens(self) -> int:
        """All output tokens over every category."""
        return sum(self.output_tokens.values())


@dataclass
class UsageMeter:
    """What the LLM calls made inside one `metering()` block spent, and how they failed."""

    tally: UsageTally = field(default_factory=UsageTally)
    errors: list[BaseException] = field(default_factory=list)
    finishes: list[tuple[str, str | None]] = field(default_factory=list)
    """(category, finish reason) of each reply, in the order the replies came."""

    @property
    def last_cut(self) -> str | None:
        """The finish reason of the last reply when it was cut (`length`, ...), else None.

        A search's last reply is its answer (local/basic: the only call; global and DRIFT:
        the reduce call; ToG: the answer call).
        """
        if not self.finishes:
            return None
        reason = self.finishes[-1][1]
        return reason if reason in CUT_REASONS else None

    def filtered(self) -> str | None:
        """The category of a reply the provider's content filter stopped, if any."""
        return next((c for c, r in self.finishes if r == "content_filter"), None)


_meter: contextvars.ContextVar[UsageMeter | None] = contextvars.ContextVar(
    "gtog_usage_meter", default=None
)


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """Count every chat call made in this block (in this task and the tasks it starts)."""
    meter = UsageMeter()
    token = _meter.set(meter)
    try:
        yield meter
    finally:
        _meter.reset(token)


def current_meter() -> UsageMeter | None:
    """The meter of the enclosing `metering()` block, if any."""
    return _meter.get()


class ModelFatalError(FatalRunError):
    """A provider error that stops the run: the key, the permission or the model is wrong."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def fatal_reason(exc: BaseException) -> int | None:
    """The HTTP status of an error that retrying cannot fix (401, 403, 404), else None."""
    if isinstance(exc, ModelFatalError):
        return exc.status
    status = getattr(exc, "status_code", None)
    name = type(exc).__name__
    by_name = {"AuthenticationError": 401, "PermissionDeniedError": 403, "NotFoundError": 404}
    if name in by_name:
        return by_name[name]
    return status if status in _FATAL_STATUS else None


def as_fatal(exc: BaseException, model_id: str, config: ModelConfig) -> BaseException:
    """`exc` as a `ModelFatalError` naming the model when it is fatal, else `exc` itself."""
    status = fatal_reason(exc)
    if status is None or isinstance(exc, ModelFatalError):
        return exc
    where = f" at {config.api_base}" if config.api_base else ""
    return ModelFatalError(
        f"model {model_id!r} ({config.model_provider}/{config.model}{where}) answered "
        f"{status}: {_FATAL_STATUS[status]}",
        status,
    )


def model_cost_usd(config: ModelConfig, prompt_tokens: int, output_tokens: int) -> float | None:
    """Price of one call from LiteLLM's cost map; None when the model has no known price."""
    from graphrag_llm.model_cost_registry import model_cost_registry

    costs = model_cost_registry.get_model_costs(f"{config.model_provider}/{config.model}")
    if costs is None and config.model_provider in ("openai", "azure"):
        costs = model_cost_registry.get_model_costs(config.model)
    if not costs:
        return None
    try:
        return prompt_tokens * float(costs["input_cost_per_token"]) + output_tokens * float(
            costs["output_cost_per_token"]
        )
    except (KeyError, TypeError, ValueError):
        return None


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
        meter = _meter.get()
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
    )


# -- structured replies -------------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_KEY_VALUE = re.compile(r"^\W*?([A-Za-z_]\w*)\W*?\s*[:=]\s*(.+?)\s*$", re.M)


@dataclass(frozen=True)
class JsonReply(Generic[T]):
    """A structured reply: `value` when the model stated one that validates, else `error`."""

    value: T | None
    error: str | None
    replies: tuple[ChatReply, ...] = ()
    text: str | None = None
    """The last raw reply (for logs and reasons)."""


def _json_candidates(text: str) -> Iterator[str]:
    yield from _FENCE.findall(text)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if start != -1:
            yield text[start : end + 1] if end > start else text[start:]


def _loads(text: str) -> tuple[Any, bool] | None:
    """(value, repaired) of the first JSON object or list in `text`, else None."""
    for candidate in _json_candidates(text):
        try:
            value = json.loads(candidate)
            repaired = False
        except json.JSONDecodeError:
            try:
                value = json_repair.loads(candidate)
            except Exception:  # json_repair raises on some pathological input
                continue
            repaired = True
        if isinstance(value, dict | list) and value:
            return value, repaired
    pairs = {k.lower(): v for k, v in _KEY_VALUE.findall(text)}
    if pairs:  # `score: 1` written as text: every value is checked against the reply below
        return {k: _scalar(v) for k, v in pairs.items()}, True
    return None


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    else:
        yield key, value


def _stated(text: str, key: str, value: Any) -> bool:
    """Does `text` state `key: value` itself (followed by a delimiter, not `or 1`)?"""
    if isinstance(value, bool):
        literal = "true|yes" if value else "false|no"
    elif isinstance(value, int | float):
        literal = "|".join(re.escape(s) for s in {str(value), f"{value:g}", json.dumps(value)})
    else:
        return True
    quote = "[\"']?"
    pattern = rf"{quote}{re.escape(key)}{quote}\s*[:=]\s*{quote}(?:{literal}){quote}\s*"
    return re.search(pattern + r"(?=[,}\]\n\r.;]|$)", text, re.I) is not None


def _top_level_values(text: str) -> list[Any]:
    """Every well-formed JSON object or list written at the top level of `text`."""
    decoder = json.JSONDecoder()
    values, i = [], 0
    while True:
        starts = [j for j in (text.find("{", i), text.find("[", i)) if j != -1]
        if not starts:
            return values
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        if isinstance(value, dict | list) and value:
            values.append(value)
        i = max(end, start + 1)


def _several(text: str, schema: type[T]) -> int:
    """How many different replies valid under `schema` the text states in full."""
    distinct = []
    for value in _top_level_values(text):
        try:
            dumped = schema.model_validate(value).model_dump()
        except ValidationError:
            continue
        if dumped not in distinct:
            distinct.append(dumped)
    return len(distinct)


def parse_json_reply(text: str, schema: type[T]) -> tuple[T | None, str | None]:
    """`(value, None)` when `text` states a reply valid under `schema`, else `(None, why)`.

    Code fences and prose around the JSON are ignored; broken syntax is repaired, but a
    repaired reply counts only if every number and boolean in it is written in the reply
    as `key: value` (an echoed `{"score": 0 or 1}` is not a score of 0). A reply stating
    two different valid replies (two verdicts) is no reply: which one would be arbitrary.
    """
    several = _several(text or "", schema)
    if several > 1:
        return None, f"{several} different replies in one: {(text or '')[:120]!r}"
    loaded = _loads(text or "")
    if loaded is None:
        return None, f"no JSON in reply: {(text or '')[:120]!r}"
    data, repaired = loaded
    try:
        value = schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return None, f"{where}: {first['msg']} in reply {(text or '')[:120]!r}"
    if repaired:
        for key, leaf in _leaves(data):
            if key and not _stated(text, key, leaf):
                return None, f"{key}: no explicit value in reply {(text or '')[:120]!r}"
    return value, None


async def ask_json(
    model: ChatModel,
    messages: Messages,
    schema: type[T],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    structured: bool = True,
    attempts: int = 2,
    category: str | None = None,
) -> JsonReply[T]:
    """Ask for a reply in `schema`; one more attempt if it cannot be read, then an error.

    A reply cut at max_tokens or stopped by a content filter is not read at all (a cut
    verdict may be another verdict's first half). Transport errors are raised (the caller
    decides whether they are fatal); an unreadable or invalid reply is returned as
    `JsonReply(value=None, error=...)`, never as a default.
    """
    replies: list[ChatReply] = []
    error = "no attempt"
    text: str | None = None
    for _ in range(max(1, attempts)):
        reply = await model.chat(
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            json_mode=structured,
            schema=schema if structured else None,
            category=category,
        )
        replies.append(reply)
        text = reply.text
        if reply.cut is not None:  # an incomplete reply is no reply, whatever it parses to
            error = f"reply {CUT_REASONS[reply.cut]} (finish_reason: {reply.cut})"
            continue
        value, why = parse_json_reply(reply.text, schema)
        if value is not None:
            return JsonReply(value, None, tuple(replies), text)
        error = why or "invalid reply"
    return JsonReply(None, f"unusable reply: {error}", tuple(replies), text)


# -- running async work from sync code ----------------------------------------------------


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
    """`asyncio.run(awaitable)`, then LiteLLM's background worker is stopped cleanly."""

    async def main() -> Any:
        try:
            return await awaitable
        finally:
            await _stop_litellm_worker()

    return asyncio.run(main())


# -- embeddings and factories --------------------------------------------------------------


def meter_embedding(response: Any, config: ModelConfig, texts: list[str], tokenizer: Any) -> None:
    """Count one embedding request in the current meter (server-reported tokens, else the
    tokenizer's count), with its price when LiteLLM knows one."""
    meter = _meter.get()
    if meter is None:
        return
    usage = getattr(response, "usage", None)
    tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    if not tokens and tokenizer is not None:
        with contextlib.suppress(Exception):  # an estimate only: no tokenizer, no count
            tokens = sum(len(tokenizer.encode(t)) for t in texts)
    meter.tally.add_embedding(tokens, model_cost_usd(config, tokens, 0))


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
        try:
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


def _transient(config: ModelConfig) -> ModelConfig:
    """`config` whose retry (if any) also retries transient errors, unless it names its own."""
    retry = config.retry
    if retry is None or "exceptions_to_skip" in (retry.model_extra or {}):
        return config
    retry = retry.model_copy(update={"exceptions_to_skip": list(PERMANENT_ERRORS)})
    return config.model_copy(update={"retry": retry})


def with_transient_retries(config: GraphRagConfig) -> GraphRagConfig:
    """Every model of `config` retrying 429, 500, 502, 503, 504, timeouts and dropped
    connections with its configured backoff (graphrag_llm's default skips 503 and dropped
    connections); a retry block that names `exceptions_to_skip` is left as it is.

    Done through graphrag_llm's own retry (`exceptions_to_skip`): no second retry loop.
    Changes `config`'s model tables in place and returns `config`.
    """
    for models in (config.completion_models, config.embedding_models):
        for model_id, model in list(models.items()):
            models[model_id] = _transient(model)
    return config


def chat_model_from_config(config: GraphRagConfig, model_id: str) -> ChatModel:
    """The completion model `model_id` of a loaded graphrag config (transient errors retried)."""
    from graphrag_llm.completion import create_completion

    model_config = _transient(config.get_completion_model_config(model_id))
    return ChatModel(create_completion(model_config), model_config, model_id)


def embedding_model_from_config(config: GraphRagConfig, model_id: str) -> EmbeddingModel:
    """The embedding model `model_id` of a loaded graphrag config (transient errors retried)."""
    from graphrag_llm.embedding import create_embedding

    model_config = _transient(config.get_embedding_model_config(model_id))
    return EmbeddingModel(create_embedding(model_config), model_config, model_id)

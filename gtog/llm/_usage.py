"""What LLM calls cost: each reply's usage, tallies by category, and the current meter.

`metering()` opens a meter (a context variable, so one model serves many questions
concurrently); every chat and embedding call made inside it is counted there, with its
finish reason, so whatever a search or a judge spent is known even when it fails.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = [
    "CUT_REASONS",
    "ChatReply",
    "UsageMeter",
    "UsageTally",
    "current_meter",
    "meter_embedding",
    "metering",
    "model_cost_usd",
    "price_source",
    "token_prices",
]


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
    cached: bool = False
    """True when the reply was replayed from the model-call cache (its usage is the one
    recorded when it was first made; nothing was sent)."""

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
    cached_calls: int = 0
    """Chat and embedding calls replayed from the cache (also counted above)."""
    cached_llm_calls: int = 0
    """The chat calls among `cached_calls` (a search that replayed one took the cache's
    time, not the model's)."""
    cached_usd: float = 0.0
    """What the replayed calls cost when first made (in `cost_usd` too; not spent again)."""

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
        if reply.cached:
            self._saved(reply.cost_usd)
            self.cached_llm_calls += 1

    def add_embedding(self, tokens: int, cost: float | None, cached: bool = False) -> None:
        """Count one embedding request of `tokens` input tokens."""
        self.embedding_calls += 1
        self.embedding_tokens += tokens
        self._spend(cost)
        if cached:
            self._saved(cost)

    def _saved(self, cost: float | None) -> None:
        self.cached_calls += 1
        self.cached_usd += cost or 0.0

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


PRICE_SETTING = "cost_per_1k"
"""A model's settings key for its own price: `cost_per_1k: {input: 0.00015, output: 0.0006}`
(USD per 1,000 prompt / output tokens: gpt-4o-mini's $0.15 / $0.60 per million), used
instead of LiteLLM's price table."""


def _own_price(config: ModelConfig) -> tuple[float, float] | None:
    own = (config.model_extra or {}).get(PRICE_SETTING)
    if not isinstance(own, dict):
        return None
    try:
        return float(own.get("input", 0)) / 1000, float(own.get("output", 0)) / 1000
    except (TypeError, ValueError):
        return None


def token_prices(config: ModelConfig) -> tuple[float, float] | None:
    """USD per prompt token and per output token: the model's `cost_per_1k` setting, else
    LiteLLM's price table; None when neither knows the model."""
    own = _own_price(config)
    if own is not None:
        return own
    from graphrag_llm.model_cost_registry import model_cost_registry

    costs = model_cost_registry.get_model_costs(f"{config.model_provider}/{config.model}")
    if costs is None and config.model_provider in ("openai", "azure"):
        costs = model_cost_registry.get_model_costs(config.model)
    if not costs:
        return None
    try:
        return float(costs["input_cost_per_token"]), float(
            costs.get("output_cost_per_token") or 0.0
        )
    except (KeyError, TypeError, ValueError):
        return None


def price_source(config: ModelConfig) -> str | None:
    """Where `config`'s price comes from: `settings cost_per_1k`, `LiteLLM price table`,
    or None (no price known)."""
    if _own_price(config) is not None:
        return f"settings {PRICE_SETTING}"
    return "LiteLLM price table" if token_prices(config) is not None else None


def model_cost_usd(config: ModelConfig, prompt_tokens: int, output_tokens: int) -> float | None:
    """Price of one call (`token_prices`); None when the model has no known price."""
    prices = token_prices(config)
    if prices is None:
        return None
    return prompt_tokens * prices[0] + output_tokens * prices[1]


def meter_embedding(response: Any, config: ModelConfig, texts: list[str], tokenizer: Any) -> None:
    """Count one embedding request in the current meter (server-reported tokens, else the
    tokenizer's count), with its price when one is known; charge it to the limits."""
    from gtog.llm._budget import charge

    usage = getattr(response, "usage", None)
    tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    if not tokens and tokenizer is not None:
        with contextlib.suppress(Exception):  # an estimate only: no tokenizer, no count
            tokens = sum(len(tokenizer.encode(t)) for t in texts)
    cost = model_cost_usd(config, tokens, 0)
    cached = bool(getattr(response, "gtog_cached", False))
    charge(1, tokens, cost, cached=cached)
    meter = _meter.get()
    if meter is not None:
        meter.tally.add_embedding(tokens, cost, cached)

"""The figures an estimate adds up: calls, tokens and USD, each with a low and a high.

Calls count chat and embedding requests together, prompt tokens count embedding input
too (as the summary's efficiency totals do when added up). USD is None once any part of
it has no known price (a partial sum would understate it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_llm.config import ModelConfig

__all__ = ["FIELDS", "Figures", "Range", "priced"]

FIELDS = ("llm_calls", "prompt_tokens", "output_tokens", "usd")


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


@dataclass
class Figures:
    """Calls, tokens and USD of some calls."""

    llm_calls: float = 0.0
    prompt_tokens: float = 0.0
    output_tokens: float = 0.0
    usd: float | None = 0.0

    def __add__(self, other: Figures) -> Figures:
        return Figures(
            self.llm_calls + other.llm_calls,
            self.prompt_tokens + other.prompt_tokens,
            self.output_tokens + other.output_tokens,
            _add(self.usd, other.usd),
        )

    def __sub__(self, other: Figures) -> Figures:
        return self + other.scaled(-1.0)

    def scaled(self, k: float) -> Figures:
        """Every figure times `k`."""
        return Figures(
            self.llm_calls * k,
            self.prompt_tokens * k,
            self.output_tokens * k,
            None if self.usd is None else self.usd * k,
        )

    @classmethod
    def of(cls, data: dict[str, Any]) -> Figures:
        """From a dict with the `FIELDS` (a note of the cache, a record's usage)."""
        usd = data.get("usd")
        return cls(
            float(data.get("llm_calls") or 0),
            float(data.get("prompt_tokens") or 0),
            float(data.get("output_tokens") or 0),
            None if usd is None else float(usd),
        )

    def as_dict(self) -> dict[str, Any]:
        """`{llm_calls, prompt_tokens, output_tokens, usd}`: counts rounded to whole ones."""
        return {
            "llm_calls": round(max(self.llm_calls, 0.0)),
            "prompt_tokens": round(max(self.prompt_tokens, 0.0)),
            "output_tokens": round(max(self.output_tokens, 0.0)),
            "usd": None if self.usd is None else max(self.usd, 0.0),
        }


@dataclass
class Range:
    """One row of an estimate: its figures (`mid`), and the cheapest and dearest it can be."""

    mid: Figures = field(default_factory=Figures)
    low: Figures = None  # type: ignore[assignment]
    high: Figures = None  # type: ignore[assignment]

    def __post_init__(self) -> None:  # a known part: low = mid = high
        if self.low is None:
            self.low = self.mid
        if self.high is None:
            self.high = self.mid

    def add(self, mid: Figures, low: Figures | None = None, high: Figures | None = None) -> None:
        """Add one part (low and high default to `mid`: a known part)."""
        self.mid = self.mid + mid
        self.low = self.low + (low if low is not None else mid)
        self.high = self.high + (high if high is not None else mid)

    def __iadd__(self, other: Range) -> Range:
        self.add(other.mid, other.low, other.high)
        return self


def priced(
    config: ModelConfig | None,
    calls: float,
    prompt: float,
    output: float,
    embedding: ModelConfig | None = None,
    embedding_calls: float = 0.0,
    embedding_tokens: float = 0.0,
) -> Figures:
    """Figures of chat calls on `config` (and embedding calls on `embedding`), priced."""
    from gtog.llm._usage import model_cost_usd

    usd: float | None = 0.0
    if calls and config is not None:
        usd = model_cost_usd(config, round(prompt), round(output))
    if embedding_calls and embedding is not None:
        usd = _add(usd, model_cost_usd(embedding, round(embedding_tokens), 0))
    return Figures(calls + embedding_calls, prompt + embedding_tokens, output, usd)

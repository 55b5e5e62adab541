"""The `cost_per_1k` examples hold what the key says: USD per 1,000 tokens (the tutorial once
showed per-million figures under it, and a copied example priced 4 demo pairs at $1.15)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphrag_llm.config import ModelConfig

from gtog.llm._usage import PRICE_SETTING, token_prices

ROOT = Path(__file__).resolve().parents[3]
NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
EXAMPLE = re.compile(rf"cost_per_1k:\s*\{{\s*input:\s*{NUMBER},\s*output:\s*{NUMBER}\s*\}}")
"""An example with figures (`{input: ..., output: ...}` shows the shape only)."""


def examples() -> list[tuple[str, float, float]]:
    found = []
    for path in [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "gtog" / "llm" / "_usage.py"]:
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        found += [(path.name, float(a), float(b)) for a, b in EXAMPLE.findall(text)]
    return found


def test_there_are_examples_to_check() -> None:
    assert len(examples()) >= 3


@pytest.mark.parametrize(("where", "price_in", "price_out"), examples())
def test_each_example_prices_gpt_4o_mini_as_litellm_does(
    where: str, price_in: float, price_out: float
) -> None:
    table = ModelConfig(model_provider="openai", model="gpt-4o-mini", api_key="k")
    own = ModelConfig(
        model_provider="openai",
        model="not-in-the-table",
        api_key="k",
        **{PRICE_SETTING: {"input": price_in, "output": price_out}},
    )
    expected = token_prices(table)
    assert expected is not None
    assert token_prices(own) == pytest.approx(expected), where

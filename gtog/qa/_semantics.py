"""The two rule sets of `gtog.qa`: the seed README's with gtog's improvements (default,
"seed") and graphrag-eval 6.6.1's exact behaviour ("graphrag-eval-6")."""

from __future__ import annotations

from typing import Literal

__all__ = ["GE6", "SEED", "SEMANTICS", "Semantics", "check_semantics"]

Semantics = Literal["seed", "graphrag-eval-6"]
"""A rule set: the seed README's with gtog's improvements, or graphrag-eval 6.6.1's."""
SEED: Semantics = "seed"
GE6: Semantics = "graphrag-eval-6"
SEMANTICS: tuple[Semantics, ...] = (SEED, GE6)
"""Every rule set, the default first."""


def check_semantics(value: str) -> Semantics:
    """`value` if it names a rule set, else `ValueError`."""
    if value not in SEMANTICS:
        raise ValueError(f"semantics must be one of {', '.join(SEMANTICS)}; got {value!r}")
    return value  # type: ignore[return-value]

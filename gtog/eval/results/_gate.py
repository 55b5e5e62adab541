"""The CI gate of `gtog eval --fail-under METRIC=VALUE`: which methods scored too low.

A gate `correctness=0.7` applies to every method of the run, `tog:correctness=0.7` to one.
It reads the strict mean (`by_method[M].strict`: over the questions every method has,
a failed search counted as a wrong answer), so a run cannot pass by failing. A method with
no such mean fails the gate too (nothing shows it is good enough). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gtog._errors import InputError

__all__ = ["Gate", "check_gates", "parse_gate"]

_GATE = re.compile(r"^(?:(?P<method>[^:=\s]+):)?(?P<metric>[^:=\s]+)=(?P<value>[-+.\deE]+)$")


@dataclass(frozen=True)
class Gate:
    """`metric` must reach `value` (for `method`, or every method when None)."""

    metric: str
    value: float
    method: str | None = None


def parse_gate(text: str) -> Gate:
    """`[METHOD:]METRIC=VALUE`; InputError naming the option otherwise."""
    m = _GATE.match(text.strip())
    if m is None:
        raise InputError(f"--fail-under {text!r}: expected METRIC=VALUE or METHOD:METRIC=VALUE")
    try:
        value = float(m["value"])
    except ValueError:
        raise InputError(f"--fail-under {text!r}: {m['value']!r} is not a number") from None
    return Gate(m["metric"], value, m["method"])


def check_gates(summary: dict[str, Any], gates: list[Gate]) -> list[str]:
    """One line per method and gate it does not pass (empty: every gate passes)."""
    failures = []
    by_method = summary.get("by_method") or {}
    for gate in gates:
        methods = [gate.method] if gate.method else list(by_method)
        for method in methods:
            strict = (by_method.get(method) or {}).get("strict") or {}
            mean = strict.get(gate.metric)
            if mean is None:
                failures.append(f"{method} {gate.metric}: no score (gate {gate.value:g})")
            elif mean < gate.value:
                n = (strict.get("scored") or {}).get(gate.metric)
                failures.append(
                    f"{method} {gate.metric}: {mean:.3f} < {gate.value:g} (strict mean, n {n})"
                )
    return failures

"""The CI gate of `gtog eval --fail-under METRIC=VALUE`: which methods scored too low.

A gate `correctness=0.7` applies to every method of the run, `tog:correctness=0.7` to one.
It reads the strict mean (`by_method[M].strict`: over the questions every method has, a
failed search and an unscored judge call, whose judge failed or gave no usable verdict,
each counted as a wrong answer), so a run cannot pass by failing; each failing line says
how many of its zeros are failures. A method with no such mean fails the gate too (nothing
shows it is good enough). A threshold outside the metric's scale is bad input
(`check_scale`). Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gtog._errors import InputError
from gtog.eval.scoring._base import metric_scale

__all__ = ["Gate", "check_gates", "check_scale", "gates_passed", "parse_gate"]

_GATE = re.compile(r"^(?:(?P<method>[^:=\s]+):)?(?P<metric>[^:=\s]+)=(?P<value>[-+.\deE]+)$")


@dataclass(frozen=True)
class Gate:
    """`metric` must reach `value` (for `method`, or every method when None)."""

    metric: str
    value: float
    method: str | None = None


def parse_gate(text: str, option: str = "--fail-under") -> Gate:
    """`[METHOD:]METRIC=VALUE`; InputError naming the option otherwise."""
    m = _GATE.match(text.strip())
    if m is None:
        raise InputError(f"{option} {text!r}: expected METRIC=VALUE or METHOD:METRIC=VALUE")
    try:
        value = float(m["value"])
    except ValueError:
        raise InputError(f"{option} {text!r}: {m['value']!r} is not a number") from None
    return Gate(m["metric"], value, m["method"])


def check_scale(
    gate: Gate,
    option: str = "--fail-under",
    *,
    drop: bool = False,
    scales: dict[str, Any] | None = None,
) -> None:
    """InputError (one line) when `gate.value` lies outside its metric's scale (a graded
    judge's from the run's `judge.scales`): a score for `--fail-under`, a size of drop (0
    to the scale's width) with `drop`."""
    lo, hi = metric_scale(gate.metric, scales)
    if drop:
        lo, hi = 0.0, hi - lo
    if not lo <= gate.value <= hi:
        what = "a drop" if drop else "a score"
        raise InputError(
            f"{option} {gate.metric}={gate.value:g}: {gate.metric} is scored from {lo:g} to "
            f"{hi:g}, so {what} of {gate.value:g} is outside its scale"
            + (
                f" (did you mean {gate.value / 100:g}?)"
                if hi == 1 and 1 < gate.value <= 100
                else ""
            )
        )


def _failed(strict: dict[str, Any], metric: str) -> str:
    failed = (strict.get("failed") or {}).get(metric) or {}
    s, j = failed.get("search_errors", 0), failed.get("judge_errors", 0)
    if not s and not j:
        return "no failure among them"
    return f"counted as wrong: {s} failed searches, {j} unscored judge calls"


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
                    f"{method} {gate.metric}: {mean:.3f} < {gate.value:g} (strict mean, n {n}; "
                    f"{_failed(strict, gate.metric)})"
                )
    return failures


def gates_passed(summary: dict[str, Any], gates: list[Gate]) -> str:
    """The one line said when every gate passes: each method's strict mean per gate."""
    by_method = summary.get("by_method") or {}
    parts = []
    for gate in gates:
        methods = [gate.method] if gate.method else list(by_method)
        means = []
        for method in methods:
            strict = (by_method.get(method) or {}).get("strict") or {}
            n = (strict.get("scored") or {}).get(gate.metric)
            means.append(f"{method} {strict.get(gate.metric, 0):.3f} (n {n})")
        parts.append(f"{gate.metric} >= {gate.value:g}: {', '.join(means)}")
    return (
        "gate passed: " + "; ".join(parts) + " (strict means: a failed search or unscored "
        "judge call counts as wrong)"
    )

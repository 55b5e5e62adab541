"""The CI gate of `gtog eval diff A B`: `--fail-on-regression` (significance) and
`--max-drop [METHOD:]METRIC=X` (threshold). Pure functions of a diff (`diff_runs`).

A gate vouches only for what was compared, so it fails (exit 1) when:
- B lost questions A scored (missing, another question text, a failed search or an
  unscored judge call in B), with the counts, or has no answers of a method A has;
- `--fail-on-regression`: a drop is significant (Holm p < ALPHA);
- `--max-drop`: a mean dropped by more than X, whatever the p-value.

It refuses to gate (exit 2) when the runs were judged differently (a change of scores may be
the judge's, not the method's) unless `allow_judge_change`, and when only the significance
mode is asked and no entry could be significant at its n (the gate could not fail: give
`--max-drop`). Entries that could not be significant are named either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gtog.eval.results._diff import ALPHA, regressions
from gtog.eval.results._gate import Gate

__all__ = ["DiffVerdict", "check_diff"]

_TOLERANCE = 1e-9
"""Float noise allowed in a drop compared with its threshold (1.0 - 0.95 is 0.0500...04)."""


@dataclass
class DiffVerdict:
    """What the diff gate says: `failures` (exit 1), `refusal` (exit 2), `notes` (always
    shown) and, when it passes, `passed` (one line)."""

    failures: list[str] = field(default_factory=list)
    refusal: str | None = None
    notes: list[str] = field(default_factory=list)
    passed: str | None = None

    @property
    def exit_code(self) -> int:
        """2 refused, 1 failed, 0 passed."""
        return 2 if self.refusal else 1 if self.failures else 0


def _lost(method: str, metric: str, e: dict[str, Any]) -> str | None:
    cov = e.get("coverage") or {}
    parts = [
        f"{cov[k]} {label}"
        for k, label in (
            ("search_errors", "failed searches"),
            ("judge_errors", "unscored judge calls"),
            ("missing", "missing"),
            ("changed", "with another question or reference"),
        )
        if cov.get(k)
    ]
    if not parts:
        return None
    return (
        f"{method} {metric}: B covers {cov.get('compared', 0)} of the {cov.get('a', 0)} "
        f"questions A scored ({', '.join(parts)} in B)"
    )


def _too_small(method: str, metric: str, e: dict[str, Any]) -> str:
    return f"{method} {metric} (n {e['n']}, smallest p after Holm {e['p_floor_holm']:.3g})"


def check_diff(
    diff: dict[str, Any],
    *,
    significance: bool,
    max_drops: list[Gate],
    allow_judge_change: bool = False,
) -> DiffVerdict:
    """The gate's verdict on `diff` (see the module docstring); no gate: notes only."""
    out = DiffVerdict()
    gating = significance or bool(max_drops)
    entries = [
        (m, x, e) for m, metrics in diff.get("methods", {}).items() for x, e in metrics.items()
    ]
    judges = diff.get("judges") or []
    if judges:
        out.notes.append(
            "the runs were judged differently: " + "; ".join(judges) + " (a change of scores "
            "may be the judge's, not the method's)"
        )
    mute = [e for e in entries if e[2].get("can_be_significant") is False]
    if mute:
        listed = ", ".join(_too_small(*e) for e in mute)
        out.notes.append(
            f"n too small for any drop to be significant (Holm p < {ALPHA:g}): {listed}; "
            "--max-drop METRIC=X gates on the size of a drop"
        )
    lost = [f"{name}: a method of A with no answers in B" for name in diff.get("only_in_a") or []]
    lost += [line for m, x, e in entries if (line := _lost(m, x, e)) is not None]
    if not gating:
        out.notes += lost
        return out
    if judges and not allow_judge_change:
        out.refusal = (
            "cannot gate: the runs were judged differently (" + "; ".join(judges) + "); "
            "--allow-judge-change gates anyway"
        )
        return out
    out.failures += lost
    if not entries:
        out.failures.append("nothing compared: no method and metric both runs scored")
    if significance:
        out.failures += [f"regression: {line}" for line in regressions(diff)]
    for gate in max_drops:
        matched = [
            (m, x, e)
            for m, x, e in entries
            if x == gate.metric and (gate.method is None or m == gate.method)
        ]
        if not matched:
            where = f"{gate.method} " if gate.method else ""
            out.failures.append(f"--max-drop {where}{gate.metric}: nothing compared")
        for method, metric, e in matched:
            if e["delta"] is None:
                out.failures.append(f"--max-drop {method} {metric}: no score to compare")
            elif -e["delta"] > gate.value + _TOLERANCE:
                out.failures.append(
                    f"--max-drop {method} {metric}: {e['a']:.3f} -> {e['b']:.3f}, a drop of "
                    f"{-e['delta']:.3f} > {gate.value:g} (n {e['n']})"
                )
    if not out.failures and significance and not max_drops and len(mute) == len(entries):
        # (entries is not empty here: an empty diff failed above)
        out.refusal = (
            "--fail-on-regression cannot fail here: no drop could be significant at these n "
            f"({', '.join(_too_small(*e) for e in mute)}); add --max-drop METRIC=X"
        )
        return out
    if not out.failures:
        modes = [f"no significant drop (Holm p < {ALPHA:g})"] if significance else []
        modes += [
            f"{g.method + ':' if g.method else ''}{g.metric} dropped by at most {g.value:g}"
            for g in max_drops
        ]
        n = min((e["n"] for _, _, e in entries), default=0)
        out.passed = (
            f"gate passed: {'; '.join(modes)}, over {len(entries)} method-metric pairs "
            f"(n >= {n}, every question A scored compared in B)"
        )
    return out

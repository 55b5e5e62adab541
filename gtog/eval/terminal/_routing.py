"""The routing line under the scores table: headroom, each router's regret, the learned
rule's held-out gain (the summary's `routing`, `gtog.eval.results._routing`).

    routing (correctness, 30 questions): oracle 1.00 vs best single tog 0.60, headroom
    +0.40 [0.21, 0.59]; agent regret 0.63 [0.44, 0.79]; learned rule (by question_type)
    held-out 1.00, +0.40 [0.21, 0.59] over tog.
"""

from __future__ import annotations

from typing import Any

__all__ = ["routing_line"]


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _num(value: Any, sign: bool = False) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:+.2f}" if sign else f"{value:.2f}"


def _ci(entry: dict) -> str:
    ci = entry.get("ci95")
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(v, int | float) for v in ci):
        return f" [{ci[0]:.2f}, {ci[1]:.2f}]"
    return ""


def routing_line(summary: dict[str, Any]) -> str | None:
    """One line on routing, or None when the summary has no `routing`."""
    routing = _dict(summary.get("routing"))
    if not routing:
        return None
    best, head = _dict(routing.get("best_single")), _dict(routing.get("headroom"))
    parts = [
        f"routing ({routing.get('metric')}, {routing.get('n')} questions): oracle "
        f"{_num(_dict(routing.get('oracle')).get('mean'))} vs best single "
        f"{best.get('method')} {_num(best.get('mean'))}, headroom "
        f"{_num(head.get('mean'), sign=True)}{_ci(head)}"
    ]
    for name, router in _dict(routing.get("routers")).items():
        regret = _dict(_dict(router).get("regret"))
        parts.append(f"{name} regret {_num(regret.get('mean'))}{_ci(regret)}")
    rule = _dict(routing.get("learned_rule"))
    if rule:
        gain = _dict(rule.get("gain"))
        by = f"by {rule['feature']}" if rule.get("feature") else "no feature beat one method"
        parts.append(
            f"learned rule ({by}) held-out {_num(_dict(rule.get('held_out')).get('mean'))}, "
            f"{_num(gain.get('mean'), sign=True)}{_ci(gain)} over {rule.get('best_single')}"
        )
    return "; ".join(parts) + "."

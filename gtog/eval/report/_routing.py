"""The report's Routing section: headroom over the best single method, each router's
regret and confusion table, the learned rule (from the summary's `routing`; tolerant of
older or partial summaries, like every section)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gtog.eval.report._readers import as_dict, as_int, as_interval, as_num, as_str
from gtog.eval.terminal._routing import routing_line

__all__ = ["Figure", "RouteRow", "RouterView", "RoutingSection", "routing_section"]


@dataclass(frozen=True)
class Figure:
    """A mean or a difference, with its 95% interval (None: none)."""

    value: float | None
    ci95: tuple[float, float] | None = None

    @classmethod
    def of(cls, entry: Any) -> Figure:
        e = as_dict(entry)
        return cls(as_num(e.get("mean")), as_interval(e.get("ci95")))


@dataclass(frozen=True)
class RouteRow:
    """One route of a router's confusion table."""

    route: str
    chosen: int
    share: float | None
    mean: float | None
    right: int
    wrong: int
    wrong_other_right: int
    best: str
    """Which method was cheapest-right on these questions (`tog 6, basic 6`)."""
    direct_mean: float | None


@dataclass(frozen=True)
class RouterView:
    """One router against the oracle and the best single method."""

    name: str
    n: int
    mean: Figure
    regret: Figure
    vs_best: Figure
    vs_direct: Figure | None
    routes: list[RouteRow]
    misrouted: list[str]


@dataclass(frozen=True)
class GroupRow:
    """Headroom within one `group_by` group."""

    field: str
    value: str
    n: int
    oracle: float | None
    best: str
    best_mean: float | None
    headroom: Figure


@dataclass(frozen=True)
class RuleRow:
    """One line of the learned rule: questions with `value` go to `method`."""

    value: str
    method: str
    n: int
    mean: float | None
    fallback: bool = False
    """Too few questions for a rule of their own: the rule's `otherwise` method."""


@dataclass(frozen=True)
class RoutingSection:
    """What the Routing section shows."""

    line: str
    metric: str
    n: int
    oracle: Figure
    best: str
    best_single: Figure
    headroom: Figure
    only_one_right: float | None
    only_one_by: str
    cheapest_mean: float | None
    cheapest_cost: float | None
    best_cost: float | None
    groups: list[GroupRow] = field(default_factory=list)
    routers: list[RouterView] = field(default_factory=list)
    rule_feature: str | None = None
    rule: list[RuleRow] = field(default_factory=list)
    rule_otherwise: str = ""
    held_out: Figure | None = None
    gain: Figure | None = None
    rule_cost: float | None = None
    folds: str = ""


def _counts(value: Any) -> str:
    return ", ".join(f"{k} {as_int(v)}" for k, v in as_dict(value).items()) or "–"


def _router(name: str, e: dict[str, Any]) -> RouterView:
    routes = [
        RouteRow(
            route=str(route),
            chosen=as_int(r.get("chosen")) or 0,
            share=as_num(r.get("share")),
            mean=as_num(r.get("mean")),
            right=as_int(r.get("right")) or 0,
            wrong=as_int(r.get("wrong")) or 0,
            wrong_other_right=as_int(r.get("wrong_other_right")) or 0,
            best=_counts(r.get("best")),
            direct_mean=as_num(r.get("direct_mean")),
        )
        for route, r in as_dict(e.get("confusion")).items()
        if isinstance(r, dict)
    ]
    direct = e.get("vs_direct")
    return RouterView(
        name=name,
        n=as_int(e.get("n")) or 0,
        mean=Figure.of(e.get("mean")),
        regret=Figure.of(e.get("regret")),
        vs_best=Figure.of(e.get("vs_best_single")),
        vs_direct=Figure.of(direct) if isinstance(direct, dict) else None,
        routes=routes,
        misrouted=[str(q) for q in e.get("misrouted") or []],
    )


def routing_section(summary: dict[str, Any]) -> RoutingSection | None:
    """The section, or None when the summary has no `routing`."""
    r = as_dict(summary.get("routing"))
    line = routing_line(summary)
    if not r or line is None:
        return None
    best = as_dict(r.get("best_single"))
    cheap = as_dict(r.get("cheapest_right"))
    only = as_dict(r.get("only_one_right"))
    groups = [
        GroupRow(
            field=str(f),
            value=str(v),
            n=as_int(g.get("n")) or 0,
            oracle=as_num(as_dict(g.get("oracle")).get("mean")),
            best=str(as_dict(g.get("best_single")).get("method") or "–"),
            best_mean=as_num(as_dict(g.get("best_single")).get("mean")),
            headroom=Figure.of(g.get("headroom")),
        )
        for f, values in as_dict(r.get("by_group")).items()
        for v, g in as_dict(values).items()
        if isinstance(g, dict)
    ]
    rule = as_dict(r.get("learned_rule"))
    rows = [
        RuleRow(
            str(x.get("value")),
            str(x.get("method")),
            as_int(x.get("n")) or 0,
            as_num(x.get("mean")),
            x.get("fallback") is True,
        )
        for x in rule.get("rule") or []
        if isinstance(x, dict)
    ]
    folds = ""
    if rule:
        folds = f"{as_int(rule.get('folds'))} folds by {as_str(rule.get('folds_by')) or '?'}"
    return RoutingSection(
        line=line,
        metric=str(r.get("metric")),
        n=as_int(r.get("n")) or 0,
        oracle=Figure.of(r.get("oracle")),
        best=str(best.get("method") or "–"),
        best_single=Figure.of(best),
        headroom=Figure.of(r.get("headroom")),
        only_one_right=as_num(only.get("share")),
        only_one_by=_counts(only.get("by_method")),
        cheapest_mean=as_num(cheap.get("mean")),
        cheapest_cost=as_num(cheap.get("cost")),
        best_cost=as_num(best.get("cost")),
        groups=groups,
        routers=[
            _router(str(n), e) for n, e in as_dict(r.get("routers")).items() if isinstance(e, dict)
        ],
        rule_feature=as_str(rule.get("feature")),
        rule=rows,
        rule_otherwise=str(rule.get("otherwise") or ""),
        held_out=Figure.of(rule.get("held_out")) if rule else None,
        gain=Figure.of(rule.get("gain")) if rule else None,
        rule_cost=as_num(rule.get("cost")),
        folds=folds,
    )

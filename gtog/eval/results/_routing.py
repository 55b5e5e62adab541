"""Is routing worth it? The best method for each question against the best single method,
the run's routers, and a rule learned from the run: the summary's `routing`.

Pure functions of records, on one metric (`routing_metric`: correctness when judged), over
the questions every method (the routers aside) has a score for; a failed search or judge
leaves its question out, as the same-question means do. A graded judge's score is read on
0-1 (its scale's low end 0, high end 1); a score of at least `RIGHT_AT` is *right*.

- **oracle**: per question, the best score any method got (ties: the cheapest answer,
  then the method listed first); its mean is what a perfect router would get.
- **best_single**: the method with the highest mean (ties: the cheaper, then the first).
- **headroom**: oracle - best single, a paired comparison with the summary's clustered
  interval (`inference.compare`). The oracle picks after seeing the scores, so it is an
  upper bound: noise in the judge alone gives it some headroom; the learned rule's
  held-out score is the realistic figure.
- **only_one_right**: the share of questions exactly one method got right, and which.
- **cheapest_right**: per question the cheapest method that still got it right (else the
  cheapest method), its mean score and its USD per answer (None when a chosen answer's cost
  is unknown).
- **by_group**: the same per `group_by` group.
- **routers** (a method whose answers name a `route`, or one named in `routing.routers`):
  its mean beside the best single method's and the oracle's on the same questions, the
  regret (oracle - router) with its interval, the confusion table (per route: how often
  chosen, its score then, how often it was wrong while another method was right, which
  method was cheapest-right, and the chosen method's own direct answer's score), the
  misrouted question ids (wrong while a method other than the route was right) and the
  router against the chosen method's direct answers (`vs_direct`).
- **learned_rule**: "for questions with feature value v, use method M", learned from what
  is known before answering (`question_features`: the `group_by` fields, the question's
  length, its wh-word, the number of the index's entities it names) on training folds and
  scored on held-out folds (k-fold by cluster: no cluster, by default no index, is in
  both); one feature per rule, chosen on the training folds. `rule` is the rule learned
  from every question, as a table; `held_out` its held-out mean with an interval; `gain`
  against the best single method; `cost` its USD per answer.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from gtog.eval.results._inference import compare, mean_stats
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._statistics import SEED, is_binary
from gtog.eval.scoring._base import is_binary_metric

__all__ = [
    "FOLDS",
    "MIN_SUPPORT",
    "RIGHT_AT",
    "headroom",
    "learned_rule",
    "question_features",
    "router_entry",
    "routers_of",
    "routing_metric",
    "routing_summary",
]

QKey = tuple[str, str]
Labels = dict[QKey, Hashable] | None

RIGHT_AT = 0.5
"""A score at least this is a right answer (1 of a 0/1 judge)."""
FOLDS = 5
"""Folds of the learned rule's cross-validation (fewer when there are fewer clusters)."""
MIN_SUPPORT = 2
"""Fewest training questions a feature value needs for a rule of its own (else the rule
falls back to the best single method of the training folds)."""
NONE = "(none)"
"""A group value, route or cheapest-right method that is not there."""
WH_WORDS = ("who", "whom", "whose", "what", "which", "where", "when", "why", "how")
_WORD = re.compile(r"[a-z']+")


def routing_metric(metrics: Sequence[str]) -> str | None:
    """The metric routing is judged on: correctness when judged, else the first."""
    if "correctness" in metrics:
        return "correctness"
    return metrics[0] if metrics else None


def routers_of(records: Iterable[MethodRecord], named: Iterable[str] = ()) -> list[str]:
    """The run's routers: those `named` (`routing.routers`) and every method with a
    `route` on some answer."""
    out = list(dict.fromkeys(named))
    for r in records:
        if r.route is not None and r.method not in out:
            out.append(r.method)
    return out


# --- the table of scores -------------------------------------------------------------


class _Table:
    """Scores, costs, routes and questions of a metric (failed answers left out)."""

    def __init__(self, records: Iterable[MethodRecord], metric: str) -> None:
        self.score: dict[str, dict[QKey, float]] = {}
        self.cost: dict[str, dict[QKey, float | None]] = {}
        self.route: dict[str, dict[QKey, str | None]] = {}
        self.records: dict[QKey, MethodRecord] = {}
        for r in records:
            q = (r.index_key, r.qid)
            self.records.setdefault(q, r)
            if r.error is not None:
                continue
            j = r.judgements.get(metric)
            if j is None or j.score is None:
                continue
            score = float(j.score)
            if j.scale:  # a graded judge's score, read on 0-1 as every other
                low, high = float(j.scale[0]), float(j.scale[1])
                score = (score - low) / (high - low) if high > low else score
            self.score.setdefault(r.method, {})[q] = score
            self.cost.setdefault(r.method, {})[q] = r.efficiency.cost_usd if r.efficiency else None
            self.route.setdefault(r.method, {})[q] = r.route

    def common(self, methods: Sequence[str]) -> list[QKey]:
        if not methods:
            return []
        sets = [set(self.score.get(m, {})) for m in methods]
        return sorted(set.intersection(*sets))

    def sort_cost(self, m: str, q: QKey) -> float:
        c = self.cost.get(m, {}).get(q)
        return math.inf if c is None else c


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _cost_mean(costs: Sequence[float | None]) -> float | None:
    """Mean USD per answer; None when any is unknown (never a mean over the known)."""
    if not costs or any(c is None for c in costs):
        return None
    return math.fsum(c for c in costs if c is not None) / len(costs)


def _right(score: float) -> bool:
    return score >= RIGHT_AT - 1e-12


def _labels(qs: Sequence[QKey], labels: Labels) -> list[Hashable] | None:
    return None if labels is None else [labels[q] for q in qs]


def _binary(metric: str, *samples: Sequence[float]) -> bool:
    return is_binary_metric(metric) and all(is_binary(s) for s in samples)


def _mean_entry(values: Sequence[float], qs: Sequence[QKey], labels: Labels, binary: bool) -> dict:
    s = mean_stats(values, _labels(qs, labels), binary=binary)
    return {"mean": _mean(values), "ci95": s["ci95"], "ci95_method": s["ci95_method"]}


def _diff_entry(
    a: Sequence[float], b: Sequence[float], qs: Sequence[QKey], labels: Labels, binary: bool
) -> dict[str, Any]:
    """a - b, paired, with the summary's (clustered) interval and test."""
    c = compare(a, b, _labels(qs, labels), binary=binary)
    keys = ("ci95", "ci95_method", "p_value", "test", "clusters", "icc", "mde")
    out = {"mean": c["diff"], "n": c["n"], **{k: c.get(k) for k in keys}}
    if "discordance" in c:
        out["discordance"] = c["discordance"]
    else:
        out["sd_diff"] = c.get("sd_diff")
    return out


def _best_single(t: _Table, methods: Sequence[str], qs: Sequence[QKey]) -> str:
    """The method with the highest mean on `qs` (ties: cheaper mean cost, then first)."""

    def key(m: str) -> tuple[float, float, int]:
        mean = _mean([t.score[m][q] for q in qs]) or 0.0
        cost = _cost_mean([t.cost[m][q] for q in qs])
        return (-round(mean, 12), math.inf if cost is None else cost, methods.index(m))

    return min(methods, key=key)


def _oracle_pick(t: _Table, methods: Sequence[str], q: QKey) -> str:
    """The method with the best score on `q` (ties: the cheapest answer, then first)."""
    return min(methods, key=lambda m: (-t.score[m][q], t.sort_cost(m, q), methods.index(m)))


def _cheapest_right(t: _Table, methods: Sequence[str], q: QKey) -> str | None:
    right = [m for m in methods if _right(t.score[m][q])]
    if not right:
        return None
    return min(right, key=lambda m: (t.sort_cost(m, q), methods.index(m)))


# --- headroom ------------------------------------------------------------------------


def _headroom(
    t: _Table, methods: list[str], qs: list[QKey], metric: str, labels: Labels
) -> dict[str, Any] | None:
    if len(methods) < 2 or not qs:
        return None
    best = _best_single(t, methods, qs)
    picks = [_oracle_pick(t, methods, q) for q in qs]
    oracle = [t.score[m][q] for m, q in zip(picks, qs, strict=True)]
    single = [t.score[best][q] for q in qs]
    binary = _binary(metric, oracle, single)
    right = {q: [m for m in methods if _right(t.score[m][q])] for q in qs}
    only = [right[q][0] for q in qs if len(right[q]) == 1]
    cheap = [_cheapest_right(t, methods, q) for q in qs]
    cheapest = [
        c
        if c is not None
        else min(methods, key=lambda m, q=q: (t.sort_cost(m, q), methods.index(m)))
        for c, q in zip(cheap, qs, strict=True)
    ]
    return {
        "n": len(qs),
        "oracle": {
            **_mean_entry(oracle, qs, labels, binary),
            "chosen": dict(Counter(picks)),
            "cost": _cost_mean([t.cost[m][q] for m, q in zip(picks, qs, strict=True)]),
        },
        "best_single": {
            "method": best,
            **_mean_entry(single, qs, labels, binary),
            "cost": _cost_mean([t.cost[best][q] for q in qs]),
        },
        "headroom": _diff_entry(oracle, single, qs, labels, binary),
        "only_one_right": {
            "share": len(only) / len(qs),
            "n": len(only),
            "by_method": {m: only.count(m) for m in methods if m in only},
        },
        "none_right": sum(1 for q in qs if not right[q]) / len(qs),
        "cheapest_right": {
            "mean": _mean([t.score[m][q] for m, q in zip(cheapest, qs, strict=True)]),
            "cost": _cost_mean([t.cost[m][q] for m, q in zip(cheapest, qs, strict=True)]),
            "chosen": dict(Counter(c or NONE for c in cheap)),
        },
    }


def headroom(
    records: Iterable[MethodRecord], methods: Sequence[str], metric: str, labels: Labels = None
) -> dict[str, Any] | None:
    """The oracle, the best single method and the headroom of `methods` on `metric` (see
    the module); None with fewer than 2 methods or no question they all scored."""
    t = _Table(records, metric)
    methods = [m for m in methods if m in t.score]
    return _headroom(t, methods, t.common(methods), metric, labels)


# --- routers -------------------------------------------------------------------------


def _router(
    t: _Table, router: str, methods: list[str], metric: str, labels: Labels
) -> dict[str, Any] | None:
    base = t.common(methods)
    qs = [q for q in base if q in t.score.get(router, {})]
    if len(methods) < 1 or not qs:
        return None
    best = _best_single(t, methods, base)
    mine = [t.score[router][q] for q in qs]
    oracle = [max(t.score[m][q] for m in methods) for q in qs]
    single = [t.score[best][q] for q in qs]
    binary = _binary(metric, mine, oracle, single)
    routes = {q: t.route.get(router, {}).get(q) for q in qs}
    confusion: dict[str, dict[str, Any]] = {}
    misrouted = []
    for q in qs:
        route = routes[q]
        row = confusion.setdefault(
            route or NONE,
            {"chosen": 0, "right": 0, "wrong_other_right": 0, "scores": [], "direct": []},
        )
        row["chosen"] += 1
        score = t.score[router][q]
        row["scores"].append(score)
        others = [m for m in methods if m != route and _right(t.score[m][q])]
        if _right(score):
            row["right"] += 1
        elif others:
            row["wrong_other_right"] += 1
            misrouted.append(q[1])
        best_here = _cheapest_right(t, methods, q) or NONE
        row.setdefault("best", Counter())[best_here] += 1
        if route in methods:
            row["direct"].append(t.score[route][q])
    table = {}
    for route, row in sorted(confusion.items(), key=lambda kv: (-kv[1]["chosen"], kv[0])):
        table[route] = {
            "chosen": row["chosen"],
            "share": row["chosen"] / len(qs),
            "mean": _mean(row["scores"]),
            "right": row["right"],
            "wrong": row["chosen"] - row["right"],
            "wrong_other_right": row["wrong_other_right"],
            "best": dict(sorted(row["best"].items(), key=lambda kv: (-kv[1], kv[0]))),
            "direct_mean": _mean(row["direct"]),
        }
    direct_qs = [q for q in qs if routes[q] in methods]
    vs_direct = None
    if direct_qs:
        a = [t.score[router][q] for q in direct_qs]
        b = [t.score[routes[q]][q] for q in direct_qs]  # type: ignore[index]
        vs_direct = _diff_entry(a, b, direct_qs, labels, _binary(metric, a, b))
    return {
        "n": len(qs),
        "mean": _mean_entry(mine, qs, labels, binary),
        "best_single": {"method": best, "mean": _mean(single)},
        "oracle": _mean(oracle),
        "regret": _diff_entry(oracle, mine, qs, labels, binary),
        "vs_best_single": _diff_entry(mine, single, qs, labels, binary),
        "vs_direct": vs_direct,
        "routes_known": sum(1 for q in qs if routes[q] is not None),
        "confusion": table,
        "misrouted": misrouted,
        "cost": _cost_mean([t.cost[router][q] for q in qs]),
    }


def router_entry(
    records: Iterable[MethodRecord],
    router: str,
    methods: Sequence[str],
    metric: str,
    labels: Labels = None,
) -> dict[str, Any] | None:
    """`routing.routers[router]` (see the module): `methods` are the ones it routes
    between (the oracle's and the best single method's)."""
    t = _Table(records, metric)
    return _router(t, router, [m for m in methods if m in t.score], metric, labels)


# --- the learned rule ----------------------------------------------------------------


def _length(words: int) -> str:
    if words <= 6:
        return "short (<= 6 words)"
    if words <= 12:
        return "medium (7-12 words)"
    return "long (13+ words)"


def question_features(record: MethodRecord, fields: Sequence[str]) -> dict[str, str]:
    """What is known of a question before answering: its `group_by` fields (`(none)`
    when absent), `length` (words, in 3 bands), `wh` (its first wh-word, `whom` as
    `who`; `other`) and `entities` (how many of the index's entities it names: 0, 1, 2+;
    `unknown` when not counted)."""
    words = _WORD.findall(record.question.lower())
    wh = next((w for w in words if w in WH_WORDS), "other")
    linked = record.linked_entities
    out = {f: record.groups.get(f, NONE) for f in fields}
    out["length"] = _length(len(words))
    out["wh"] = "who" if wh in ("whom", "whose") else wh
    out["entities"] = "unknown" if linked is None else ("2+" if linked >= 2 else str(linked))
    return out


def _fit(
    t: _Table,
    methods: list[str],
    qs: Sequence[QKey],
    features: dict[QKey, dict[str, str]],
    names: Sequence[str],
) -> tuple[str | None, dict[str, str], str]:
    """(feature, value -> method, fallback method) of the best one-feature rule on `qs`
    (its score on `qs`; ties: fewer values, then the feature listed first; None: no
    feature beats the best single method)."""
    fallback = _best_single(t, methods, qs)
    best_score = _mean([t.score[fallback][q] for q in qs]) or 0.0
    chosen: tuple[str | None, dict[str, str]] = (None, {})
    best_key = (-round(best_score, 12), 1)
    for name in names:
        groups: dict[str, list[QKey]] = {}
        for q in qs:
            groups.setdefault(features[q][name], []).append(q)
        if len(groups) < 2:
            continue
        rule = {
            value: _best_single(t, methods, members)
            for value, members in groups.items()
            if len(members) >= MIN_SUPPORT
        }
        score = _mean([t.score[rule.get(features[q][name], fallback)][q] for q in qs]) or 0.0
        key = (-round(score, 12), len(groups))
        if key < best_key:
            best_key, chosen = key, (name, rule)
    return chosen[0], chosen[1], fallback


def _folds(qs: Sequence[QKey], labels: Labels, k: int) -> tuple[list[int], int, str]:
    """Each question's fold (0..k-1), the folds, and what they are made of (`cluster`:
    whole clusters; `question`: without clusters)."""
    clusters = [labels[q] for q in qs] if labels is not None else list(qs)
    order = list(dict.fromkeys(clusters))
    by = "cluster" if labels is not None and len(order) >= 2 else "question"
    if by == "question":
        order, clusters = list(qs), list(qs)
    k = max(2, min(k, len(order)))
    perm = np.random.default_rng(SEED).permutation(len(order))
    fold_of = {order[i]: n % k for n, i in enumerate(perm)}
    return [fold_of[c] for c in clusters], k, by


def _learned(
    t: _Table,
    methods: list[str],
    qs: list[QKey],
    metric: str,
    labels: Labels,
    fields: Sequence[str],
) -> dict[str, Any] | None:
    if len(methods) < 2 or len(qs) < 2:
        return None
    features = {q: question_features(t.records[q], fields) for q in qs}
    names = [*fields, "wh", "length", "entities"]
    folds, k, by = _folds(qs, labels, FOLDS)
    picks: dict[QKey, str] = {}
    per_fold = []
    for fold in range(k):
        train = [q for q, f in zip(qs, folds, strict=True) if f != fold]
        test = [q for q, f in zip(qs, folds, strict=True) if f == fold]
        if not train or not test:
            continue
        name, rule, fallback = _fit(t, methods, train, features, names)
        per_fold.append(name or NONE)
        for q in test:
            picks[q] = rule.get(features[q][name], fallback) if name else fallback
    held = [q for q in qs if q in picks]
    best = _best_single(t, methods, qs)
    scores = [t.score[picks[q]][q] for q in held]
    single = [t.score[best][q] for q in held]
    binary = _binary(metric, scores, single)
    name, rule, fallback = _fit(t, methods, qs, features, names)
    table = []
    if name is not None:
        groups: dict[str, list[QKey]] = {}
        for q in qs:
            groups.setdefault(features[q][name], []).append(q)
        for value in sorted(groups):
            members = groups[value]
            method = rule.get(value, fallback)
            table.append(
                {
                    "feature": name,
                    "value": value,
                    "method": method,
                    "n": len(members),
                    "mean": _mean([t.score[method][q] for q in members]),
                    "fallback": value not in rule,  # too few questions: `otherwise`
                }
            )
    return {
        "feature": name,
        "rule": table,
        "otherwise": fallback,
        "held_out": _mean_entry(scores, held, labels, binary),
        "gain": _diff_entry(scores, single, held, labels, binary),
        "best_single": best,
        "cost": _cost_mean([t.cost[picks[q]][q] for q in held]),
        "best_single_cost": _cost_mean([t.cost[best][q] for q in held]),
        "folds": k,
        "folds_by": by,
        "features": names,
        "chosen_per_fold": dict(Counter(per_fold)),
    }


def learned_rule(
    records: Iterable[MethodRecord],
    methods: Sequence[str],
    metric: str,
    labels: Labels = None,
    fields: Sequence[str] = (),
) -> dict[str, Any] | None:
    """`routing.learned_rule` (see the module)."""
    t = _Table(records, metric)
    methods = [m for m in methods if m in t.score]
    return _learned(t, methods, t.common(methods), metric, labels, fields)


# --- the summary's `routing` ---------------------------------------------------------


def routing_summary(
    records: Sequence[MethodRecord],
    methods: Sequence[str],
    metrics: Sequence[str],
    *,
    fields: Sequence[str] = (),
    labels: Labels = None,
    routers: Iterable[str] = (),
) -> dict[str, Any] | None:
    """The summary's `routing` (see the module), or None when fewer than 2 methods (the
    routers aside) were scored on a common question."""
    metric = routing_metric(metrics)
    if metric is None:
        return None
    t = _Table(records, metric)
    named = routers_of(records, routers)
    base = [m for m in methods if m in t.score and m not in named]
    qs = t.common(base)
    top = _headroom(t, base, qs, metric, labels)
    if top is None:
        return None
    by_group: dict[str, dict[str, Any]] = {}
    for field in fields:
        values = sorted({t.records[q].groups.get(field, NONE) for q in qs})
        by_group[field] = {}
        for value in values:
            members = [q for q in qs if t.records[q].groups.get(field, NONE) == value]
            entry = _headroom(t, base, members, metric, labels)
            if entry is not None:
                by_group[field][value] = {
                    k: entry[k] for k in ("n", "oracle", "best_single", "headroom")
                }
    found = {r: _router(t, r, base, metric, labels) for r in named if r in t.score}
    return {
        "metric": metric,
        "right_at": RIGHT_AT,
        "methods": base,
        **top,
        "by_group": by_group,
        "routers": {r: e for r, e in found.items() if e is not None},
        "learned_rule": _learned(t, base, qs, metric, labels, fields),
    }

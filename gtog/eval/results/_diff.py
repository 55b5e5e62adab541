"""Run-to-run diff: what changed between two runs of the same questions, and is it noise?

For each method and metric both runs have, over the questions both runs scored (same index
key, id, question and reference): the means `a` and `b`, `delta` = b - a, `n`, a paired
test (exact McNemar for 0/1 scores, a seeded sign-flip permutation test of the mean
difference otherwise; with run B's `statistics.cluster_by` giving MIN_CLUSTERS clusters or
more, the cluster sign-flip test: `gtog.eval.results._inference.compare`), its p-value
Holm-adjusted over every entry (`p_holm`), and the questions that flipped: `to_wrong`
(right in A, wrong in B) and `to_right` (a fraction counts as right from 0.5 up). An entry
is a `regression` when b < a with `p_holm` below `ALPHA`. Per method, the change in mean
latency, LLM calls, tokens and USD per answer over the questions both runs answered (an
answer replayed from the model-call cache is left out of latency: its speed is the cache's;
`latency.replayed` counts them per run).

What the comparison leaves out is counted, so a gate can refuse to vouch for it: per entry
`coverage` (the questions A scored: `compared`, and those B has `missing`, `changed`, or
lost to `search_errors` or `judge_errors`); `judges`, what differs between the runs' judges
(models, prompts, sampling: a change of scores may be the judge's); and per entry
`p_floor_holm`, the smallest p-value after Holm its test could reach at its n (every pair
discordant), with `can_be_significant` False when even that is not below `ALPHA`.

Only records each run's own spec still counts are compared (`currency`); a run with repeats
(`epochs`) is read per question, its answers' scores averaged (`reduce_epochs`), with the
first answer's cost. Pure functions.
"""

from __future__ import annotations

import math
from typing import Any

from gtog.eval.results._currency import current_records
from gtog.eval.results._epochs import reduce_epochs
from gtog.eval.results._inference import Clusters, compare
from gtog.eval.results._log import EvalLog
from gtog.eval.results._records import MethodRecord, measured_latency, replayed
from gtog.eval.results._spec import JudgeSpec
from gtog.eval.results._statistics import N_RESAMPLES, holm, is_binary
from gtog.eval.scoring._base import is_binary_metric

__all__ = ["ALPHA", "CUT", "diff_runs", "judge_changes", "regressions", "smallest_p"]

ALPHA = 0.05
CUT = 0.5
"""A score from this up counts as right when telling flips of a fraction."""

QKey = tuple[str, str]


def _same(a: MethodRecord, b: MethodRecord) -> bool:
    return a.question == b.question and a.reference == b.reference


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _score(r: MethodRecord, metric: str) -> float | None:
    j = r.judgements.get(metric)
    return None if r.error is not None or j is None or j.score is None else float(j.score)


def _efficiency(a: list[MethodRecord], b: list[MethodRecord]) -> dict[str, Any]:
    figures = {
        "latency": measured_latency,  # an answer replayed from the cache: left out
        "llm_calls": lambda e: e.llm_calls,
        "tokens": lambda e: (
            None
            if e.prompt_tokens is None or e.output_tokens is None
            else e.prompt_tokens + e.output_tokens
        ),
        "cost_usd": lambda e: e.cost_usd,
    }
    out: dict[str, Any] = {}
    for name, get in figures.items():
        pairs = [
            (get(x.efficiency), get(y.efficiency))
            for x, y in zip(a, b, strict=True)
            if x.efficiency and y.efficiency and x.error is None and y.error is None
        ]
        pairs = [(x, y) for x, y in pairs if x is not None and y is not None]
        ma, mb = _mean([x for x, _ in pairs]), _mean([y for _, y in pairs])
        out[name] = {
            "a": ma,
            "b": mb,
            "delta": None if ma is None or mb is None else mb - ma,
            "n": len(pairs),
        }
    answered = [
        (x, y)
        for x, y in zip(a, b, strict=True)
        if x.efficiency and y.efficiency and x.error is None and y.error is None
    ]
    out["latency"]["replayed"] = {
        "a": sum(1 for x, _ in answered if replayed(x.efficiency)),
        "b": sum(1 for _, y in answered if replayed(y.efficiency)),
    }
    return out


def _unscored(r: MethodRecord, metric: str) -> bool:
    """An answered record without a score for `metric` (its judge failed or gave none)."""
    j = r.judgements.get(metric)
    return r.error is None and (j is None or j.score is None)


def smallest_p(test: str | None, n: int, clusters: int | None = None) -> float | None:
    """A lower bound of the smallest two-sided p-value `test` can give on `n` pairs (on
    `clusters` clusters for the cluster sign-flip test): every pair discordant, or every
    difference of one sign; a resampled test is floored at 1 / (N_RESAMPLES + 1)."""
    if test is None or n < 1:
        return None
    if test == "mcnemar_exact":
        return min(1.0, 2 * 0.5**n)
    units = clusters if test == "cluster_sign_flip" and clusters else n
    return min(1.0, max(2 * 0.5**units, 1 / (N_RESAMPLES + 1)))


def judge_changes(a: JudgeSpec, b: JudgeSpec, metrics: list[str]) -> list[str]:
    """What differs between two runs' judges for `metrics` (empty: judged alike).

    Judge models per index key both runs have (a panel's models), the prompts, sampling
    (temperature, max_tokens, structured output), trials, the embedding model of
    `answer_similarity` and the `assertions` scorer's prompt."""
    out: list[str] = []
    if a.skipped or b.skipped:
        return ["one run was not judged (--skip-judges)"] if a.skipped != b.skipped else []
    keys = [k for k in a.models if k in b.models]
    moved = {(a.models[k], b.models[k]) for k in keys if a.models[k] != b.models[k]}
    for was, now in sorted(moved):
        where = [k for k in keys if (a.models[k], b.models[k]) == (was, now)]
        out.append(f"judge model {was} -> {now} ({', '.join(where)})")
    if a.panel != b.panel:
        out.append(f"judge panel {a.panel or 'none'} -> {b.panel or 'none'}")
    if a.prompts != b.prompts:
        out.append("judge prompts changed")
    if (a.scales or {}) != (b.scales or {}):
        out.append(f"judge scales {a.scales or 'none'} -> {b.scales or 'none'}")
    for name in ("temperature", "max_tokens", "structured_output", "trials"):
        was, now = getattr(a, name), getattr(b, name)
        if was != now:
            out.append(f"judge {name} {was} -> {now}")
    if "answer_similarity" in metrics:
        embedded = {
            (a.embedding_models[k], b.embedding_models[k])
            for k in a.embedding_models
            if k in b.embedding_models and a.embedding_models[k] != b.embedding_models[k]
        }
        out += [f"embedding model {x} -> {y}" for x, y in sorted(embedded)]
    if "assertions" in metrics and a.assertions != b.assertions:
        out.append("assertions prompt or pass threshold changed")
    seen = {*_JUDGE_NAMED, "temperature", "max_tokens", "structured_output", "trials"}
    for name in JudgeSpec.model_fields:  # any other setting that changes a score
        was, now = getattr(a, name), getattr(b, name)
        if name not in seen and was != now:
            out.append(f"judge {name} {was} -> {now}")
    return out


_JUDGE_NAMED = {"models", "panel", "prompts", "scales", "metrics", "skipped"}
_JUDGE_NAMED |= {"embedding_models", "assertions"}
"""JudgeSpec fields `judge_changes` describes by name (or, `metrics`, leaves to the diff)."""


def _answers(r: MethodRecord) -> str | None:
    return r.response if r.error is None else f"(search failed: {r.error})"


def diff_runs(a: EvalLog, b: EvalLog) -> dict[str, Any]:
    """The diff of run `b` against run `a` (see the module docstring).

    `{"methods": {M: {METRIC: {a, b, delta, n, p_value, p_holm, test, regression,
    to_wrong, to_right}}}, "answers": {M: {qid: {a, b}}}, "efficiency": {M: {...}},
    "questions": {...}, "only_in_a": [...], "only_in_b": [...]}`.
    """
    ra = reduce_epochs(current_records(a.spec, a.records, a.pairs).records)
    rb = reduce_epochs(current_records(b.spec, b.records, b.pairs).records)
    by_a = {(r.method, r.index_key, r.qid): r for r in ra}
    by_b = {(r.method, r.index_key, r.qid): r for r in rb}
    methods_a = list(dict.fromkeys([*a.spec.methods, *(r.method for r in ra)]))
    methods_b = list(dict.fromkeys([*b.spec.methods, *(r.method for r in rb)]))
    methods = [m for m in methods_a if m in methods_b]
    metrics = [m for m in a.spec.metrics if m in b.spec.metrics]
    common = [k for k in by_a if k in by_b and _same(by_a[k], by_b[k])]
    cluster_of = Clusters.of(b.spec.analysis.cluster_by).labels(by_b[k] for k in common)
    changed = sum(1 for k in by_a if k in by_b and not _same(by_a[k], by_b[k]))
    out: dict[str, Any] = {
        "methods": {},
        "answers": {},
        "efficiency": {},
        "questions": {
            "a": len({k[1:] for k in by_a}),
            "b": len({k[1:] for k in by_b}),
            "common": len({k[1:] for k in common}),
            "changed": changed,
            "a_search_errors": sum(1 for r in ra if r.error is not None),
            "b_search_errors": sum(1 for r in rb if r.error is not None),
        },
        "only_in_a": [m for m in methods_a if m not in methods_b],
        "only_in_b": [m for m in methods_b if m not in methods_a],
        "metrics": metrics,
        "judges": judge_changes(a.spec.judge, b.spec.judge, metrics),
    }
    entries: list[dict[str, Any]] = []
    for method in methods:
        keys = sorted(k for k in common if k[0] == method)
        pairs_a, pairs_b = [by_a[k] for k in keys], [by_b[k] for k in keys]
        out["efficiency"][method] = _efficiency(pairs_a, pairs_b)
        per_metric: dict[str, Any] = {}
        flipped: set[QKey] = set()
        for metric in metrics:
            both = [
                (k, sa, sb)
                for k, x, y in zip(keys, pairs_a, pairs_b, strict=True)
                if (sa := _score(x, metric)) is not None and (sb := _score(y, metric)) is not None
            ]
            xa, xb = [s for _, s, _ in both], [s for _, _, s in both]
            binary = is_binary_metric(metric) and is_binary(xa) and is_binary(xb)
            labels = None if cluster_of is None else [cluster_of[k[1:]] for k, _, _ in both]
            c = compare(xb, xa, labels, binary=binary, tests=None)  # no mde: not shown
            scored_a = [
                k for k, r in by_a.items() if k[0] == method and _score(r, metric) is not None
            ]
            lost = {"missing": 0, "changed": 0, "search_errors": 0, "judge_errors": 0}
            for k in scored_a:
                other = by_b.get(k)
                if other is None:
                    lost["missing"] += 1
                elif not _same(by_a[k], other):
                    lost["changed"] += 1
                elif other.error is not None:
                    lost["search_errors"] += 1
                elif _unscored(other, metric):
                    lost["judge_errors"] += 1
            to_wrong = [k[2] for k, sa, sb in both if sa >= CUT > sb]
            to_right = [k[2] for k, sa, sb in both if sb >= CUT > sa]
            flipped |= {(k[1], k[2]) for k, sa, sb in both if (sa >= CUT) != (sb >= CUT)}
            entry = {
                "a": c["b_mean"],
                "b": c["a_mean"],
                "delta": c["diff"],
                "n": c["n"],
                "ci95": c["ci95"],
                "ci95_naive": c["ci95_naive"],
                "p_value": c["p_value"],
                "p_value_naive": c["p_value_naive"],
                "p_holm": None,
                "test": c["test"],
                "clusters": c["clusters"],
                "regression": False,
                "to_wrong": to_wrong,
                "to_right": to_right,
                "coverage": {"a": len(scored_a), "compared": c["n"], **lost},
                "p_floor": smallest_p(c["test"], c["n"], c["clusters"]),
                "p_floor_holm": None,
                "can_be_significant": None,
            }
            per_metric[metric] = entry
            entries.append(entry)
        out["methods"][method] = per_metric
        out["answers"][method] = {
            qid: {"a": _answers(by_a[(method, key, qid)]), "b": _answers(by_b[(method, key, qid)])}
            for key, qid in sorted(flipped)
        }
    for entry, p in zip(entries, holm([e["p_value"] for e in entries]), strict=True):
        entry["p_holm"] = p
        entry["regression"] = bool(
            p is not None and p < ALPHA and entry["delta"] is not None and entry["delta"] < 0
        )
    _floors(entries)
    return out


def _floors(entries: list[dict[str, Any]]) -> None:
    """Each entry's `p_floor_holm`: at best its test's smallest p is the family's smallest,
    adjusted by Holm over the m tests (`m * p`), and never below its own floor."""
    tested = [e for e in entries if e["p_value"] is not None and e["p_floor"] is not None]
    if not tested:
        return
    least = min(e["p_floor"] for e in tested)
    for e in tested:
        floor = min(1.0, max(e["p_floor"], len(tested) * least))
        e["p_floor_holm"] = floor
        e["can_be_significant"] = floor < ALPHA


def regressions(diff: dict[str, Any]) -> list[str]:
    """`method metric: a -> b (p Holm ...)` for each significant drop."""
    out = []
    for method, metrics in diff.get("methods", {}).items():
        for metric, e in metrics.items():
            if e.get("regression"):
                out.append(
                    f"{method} {metric}: {e['a']:.3f} -> {e['b']:.3f} "
                    f"(n {e['n']}, p Holm {e['p_holm']:.3g})"
                )
    return out

"""Head-to-head judging for the page: pure functions of the summary and detailed JSON.

`head_to_head(summary, spec, methods)` reads the summary's `pairwise` (comparisons),
`pairwise_aa` (A/A checks), `pairwise_usage` and the spec's `pairwise` (criteria, trials)
into per-criterion win-rate matrices (gtog.eval.report._pairs); `win_rates` reads any list
of entries (also `pairwise_by_group`); `question_pairs` reads one detailed question's
`pairwise` into verdicts with each call's order, reply and reason. Tolerant as the rest of
the page: a malformed entry is skipped, a malformed field is missing.
"""

from __future__ import annotations

from typing import Any

from gtog.eval.report._pairs import (
    AACheck,
    Call,
    HeadToHead,
    Matrix,
    PairUsage,
    QuestionPair,
    Verdict,
    WinRate,
)
from gtog.eval.report._readers import as_dict, as_int, as_interval, as_num, as_str

__all__ = ["head_to_head", "question_pairs", "win_rate", "win_rates"]


def win_rate(entry: Any) -> WinRate | None:
    """One summary entry ({criterion, a, b, n, wins_a, ...}), None when it names no pair."""
    e = as_dict(entry)
    criterion, a, b = as_str(e.get("criterion")), as_str(e.get("a")), as_str(e.get("b"))
    if not (criterion and a and b):
        return None
    return WinRate(
        criterion=criterion,
        a=a,
        b=b,
        n=as_int(e.get("n")) or 0,
        wins=as_int(e.get("wins_a")) or 0,
        losses=as_int(e.get("wins_b")) or 0,
        ties=as_int(e.get("ties")) or 0,
        unscored=as_int(e.get("unscored")) or 0,
        rate=as_num(e.get("win_rate_a")),
        ci95=as_interval(e.get("ci95")),
        ci95_method=as_str(e.get("ci95_method")),
        ci95_reason=as_str(e.get("ci95_reason")),
        p_value=as_num(e.get("p_value")),
        p_holm=as_num(e.get("p_holm")),
        position_consistency=as_num(e.get("position_consistency")),
    )


def win_rates(entries: Any) -> list[WinRate]:
    """The readable entries of a list of summary entries."""
    rates = [win_rate(e) for e in entries] if isinstance(entries, list) else []
    return [r for r in rates if r is not None]


def _checks(entries: Any) -> list[AACheck]:
    out = []
    for entry in entries if isinstance(entries, list) else []:
        rate = win_rate(entry)
        if rate is not None:
            passes, fails = as_dict(entry).get("passes"), as_dict(entry).get("fails")
            out.append(
                AACheck(
                    rate,
                    passes if isinstance(passes, bool) else None,
                    tuple(str(f) for f in fails) if isinstance(fails, list) else None,
                )
            )
    return out


def _usage(raw: Any) -> PairUsage | None:
    usage = as_dict(raw)
    if not usage:
        return None
    return PairUsage(
        llm_calls=as_int(usage.get("llm_calls")) or 0,
        prompt_tokens=as_int(usage.get("prompt_tokens")) or 0,
        output_tokens=as_int(usage.get("output_tokens")) or 0,
        usd=as_num(usage.get("usd_total")),
        comparisons=as_int(usage.get("comparisons")),
    )


def _answer_judges(raw: Any) -> PairUsage | None:
    """The per-answer judges' usage summed over methods (`judge_usage`)."""
    per_method = [_usage(u) for u in as_dict(raw).values()]
    known = [u for u in per_method if u is not None]
    if not known:
        return None
    usd = [u.usd for u in known]
    return PairUsage(
        llm_calls=sum(u.llm_calls for u in known),
        prompt_tokens=sum(u.prompt_tokens for u in known),
        output_tokens=sum(u.output_tokens for u in known),
        usd=None if any(u is None for u in usd) else sum(u for u in usd if u is not None),
    )


def matrices(
    comparisons: list[WinRate], criteria: dict[str, str | None], methods: list[str]
) -> list[Matrix]:
    """Per criterion, the win rates of every compared method against every other.

    A stored (a, b) entry fills (a, b) and, unless (b, a) is stored too, its mirror (b, a).
    """
    out = []
    for criterion in dict.fromkeys([*criteria, *(r.criterion for r in comparisons)]):
        rates = [r for r in comparisons if r.criterion == criterion]
        if not rates:
            continue
        cells = {(r.b, r.a): r.mirror() for r in rates}
        cells.update({(r.a, r.b): r for r in rates})
        seen = {m for r in rates for m in (r.a, r.b)}
        order = [m for m in methods if m in seen] + sorted(seen - set(methods))
        out.append(Matrix(criterion, criteria.get(criterion), order, cells))
    return out


def head_to_head(
    summary: dict[str, Any], spec: dict[str, Any], methods: list[str]
) -> HeadToHead | None:
    """The head-to-head section; None when the run did no pairwise judging."""
    if not isinstance(summary.get("pairwise"), list) and not summary.get("pairwise_aa"):
        return None
    pairwise = as_dict(spec.get("pairwise"))
    criteria: dict[str, str | None] = {
        str(k): as_str(v) for k, v in as_dict(pairwise.get("criteria")).items()
    }
    comparisons = win_rates(summary.get("pairwise"))
    return HeadToHead(
        matrices=matrices(comparisons, criteria, methods),
        comparisons=comparisons,
        checks=_checks(summary.get("pairwise_aa")),
        usage=_usage(summary.get("pairwise_usage")),
        answer_judges=_answer_judges(summary.get("judge_usage")),
        trials=as_int(pairwise.get("trials")),
        criteria=criteria,
    )


def _call(raw: Any, a: str, b: str) -> Call | None:
    c = as_dict(raw)
    order = as_str(c.get("order"))
    if order not in ("ab", "ba"):
        return None
    first, second = (a, b) if order == "ab" else (b, a)
    said = as_int(c.get("said"))
    if said in (1, 2):
        said_text = f"answer {said} ({first if said == 1 else second})"
    else:
        said_text = "tie" if said == 0 else "no usable reply"
    winner = {"a": a, "b": b, "tie": "tie"}.get(as_str(c.get("winner")) or "")
    return Call(
        order=order,
        first=first,
        said=said_text,
        winner=winner,
        reason=as_str(c.get("reason")),
        error=as_str(c.get("error")),
    )


def _verdict(entry: dict[str, Any], a: str, b: str) -> Verdict:
    j = as_dict(entry.get("judgement"))
    agree = j.get("orders_agree")
    raw_calls = j.get("calls")
    calls = [_call(c, a, b) for c in raw_calls] if isinstance(raw_calls, list) else []
    return Verdict(
        criterion=str(entry.get("criterion")),
        winner={"a": a, "b": b, "tie": "tie"}.get(as_str(j.get("winner")) or ""),
        error=as_str(j.get("error")),
        orders_agree=agree if isinstance(agree, bool) else None,
        calls=[c for c in calls if c is not None],
        stale=as_str(entry.get("stale")),
    )


def question_pairs(
    raw: Any, criteria: list[str] | None = None, methods: list[str] | None = None
) -> list[QuestionPair]:
    """A detailed question's `pairwise`, one entry per compared pair, its verdicts in
    `criteria` order: the pairs in `methods` order (sorted stably), then the A/A checks
    (their two copies named `m (copy a)` and `m (copy b)`)."""
    by_pair: dict[tuple[str, str], list[Verdict]] = {}
    for entry in raw if isinstance(raw, list) else []:
        e = as_dict(entry)
        criterion, a, b = as_str(e.get("criterion")), as_str(e.get("a")), as_str(e.get("b"))
        if criterion and a and b:
            names = (a, b) if a != b else (f"{a} (copy a)", f"{b} (copy b)")
            by_pair.setdefault((a, b), []).append(_verdict(e, *names))
    first = {c: i for i, c in enumerate(criteria or [])}
    pairs = [
        QuestionPair(a, b, sorted(vs, key=lambda v: first.get(v.criterion, len(first))))
        for (a, b), vs in by_pair.items()
    ]
    rank = {m: i for i, m in enumerate(methods or [])}
    return sorted(pairs, key=lambda p: (p.aa, rank.get(p.a, len(rank)), rank.get(p.b, len(rank))))

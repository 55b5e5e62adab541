"""What a run paid: the summary's `cost` block, a pure function of its records.

`spent_usd` is what gtog's own calls (searches, judges, head-to-head judges) cost that was
sent to a provider; a call replayed from the model-call cache costs nothing again and is
counted in `cached_usd_saved` and `cache.hits` instead. Answers read from a file and HTTP
methods' answers were not paid by this run: they are left out. Where the output folder
has `spend.json` (what every session of the run sent, counted as each reply came), that
is `spent_usd`: a run stopped at its limit also paid for the calls of pairs it left
unfinished, and a re-judged answer's first verdict was paid too; `recorded_usd` is the
share the records hold. `estimate_usd` and `limit_usd` come from the output folder
(`estimate.json`, `spend.json`) when there.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gtog.eval.results._records import MethodRecord, PairRecord

__all__ = ["ESTIMATE_NAME", "SPEND_NAME", "cost_context", "cost_line", "run_cost"]

ESTIMATE_NAME = "estimate.json"
SPEND_NAME = "spend.json"


def _calls(
    records: Iterable[MethodRecord], pairs: Iterable[PairRecord]
) -> list[tuple[int, int, float | None, float]]:
    """(calls, cached calls, USD, USD saved) of every metered unit of work."""
    out: list[tuple[int, int, float | None, float]] = []
    for r in records:
        e = r.efficiency
        if e is not None and e.cached_calls is not None:  # gtog's own search
            calls = (e.llm_calls or 0) + (e.embedding_calls or 0)
            out.append((calls, e.cached_calls, e.cost_usd, e.usd_saved or 0.0))
        for j in r.judgements.values():
            if j.llm_calls:
                out.append((j.llm_calls, j.cached_calls, j.cost_usd, j.usd_saved))
    for p in pairs:
        j = p.judgement
        if j.llm_calls:
            out.append((j.llm_calls, j.cached_calls, j.cost_usd, j.usd_saved))
    return out


def run_cost(
    records: Iterable[MethodRecord],
    pairs: Iterable[PairRecord] = (),
    *,
    estimate_usd: float | None = None,
    limit_usd: float | None = None,
    paid_usd: float | None = None,
    paid_known: bool = False,
) -> dict[str, Any]:
    """`spent_usd` (None when a model's price is unknown), `recorded_usd`,
    `cached_usd_saved`, `estimate_usd`, `limit_usd` and `cache: {hits, misses,
    usd_saved}`; with `paid_known` (spend.json), `spent_usd` is `paid_usd`."""
    units = _calls(records, pairs)
    hits = sum(c for _, c, _, _ in units)
    saved = math.fsum(s for _, _, _, s in units)
    known = all(u is not None for _, _, u, _ in units)
    spent = math.fsum((u or 0.0) for _, _, u, _ in units) - saved if known else None
    recorded = max(spent, 0.0) if spent is not None else None
    return {
        "spent_usd": paid_usd if paid_known else recorded,
        "recorded_usd": recorded,
        "cached_usd_saved": saved,
        "estimate_usd": estimate_usd,
        "limit_usd": limit_usd,
        "cache": {
            "hits": hits,
            "misses": sum(n for n, _, _, _ in units) - hits,
            "usd_saved": saved,
        },
    }


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cost_context(output_dir: Path) -> dict[str, Any]:
    """`estimate_usd` (estimate.json's estimate of the whole run, what was already held
    included: comparable with `spent_usd` + `cached_usd_saved`), `limit_usd` (the last
    session's, from spend.json) and `paid_usd` (spend.json's USD: what the run sent, None
    when a price was unknown; `paid_known` when spend.json says) of the run in
    `output_dir`; None where no file says."""
    estimate = _read(output_dir / ESTIMATE_NAME)
    whole = estimate.get("run") or estimate.get("total") or {}
    spend = _read(output_dir / SPEND_NAME)
    limit, paid = spend.get("limit_usd"), spend.get("usd")
    usd = whole.get("usd") if isinstance(whole, dict) else None
    known = isinstance(paid, int | float) and not isinstance(paid, bool)
    return {
        "estimate_usd": float(usd) if isinstance(usd, int | float) else None,
        "limit_usd": float(limit) if isinstance(limit, int | float) else None,
        "paid_usd": None if not known or spend.get("usd_unknown") else float(paid),
        "paid_known": known,
    }


def _usd(value: float | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def cost_line(cost: dict[str, Any]) -> str:
    """The summary's `cost` in one line: `cost: $0.0412 spent; the cache replayed 57 of
    80 calls ($0.0301 saved); estimate $0.0800; limit $0.1000`."""
    spent = cost.get("spent_usd")
    cache = cost.get("cache") or {}
    if spent is None and not cache:
        return ""
    parts = [f"{_usd(spent)} spent" if spent is not None else "USD unknown (no price)"]
    hits, misses = cache.get("hits") or 0, cache.get("misses") or 0
    if hits:
        parts.append(
            f"the cache replayed {hits} of {hits + misses} calls "
            f"({_usd(cache.get('usd_saved') or 0.0)} saved)"
        )
    if cost.get("estimate_usd") is not None:
        parts.append(f"estimate {_usd(cost['estimate_usd'])}")
    if cost.get("limit_usd") is not None:
        parts.append(f"limit {_usd(cost['limit_usd'])}")
    return "cost: " + "; ".join(parts)

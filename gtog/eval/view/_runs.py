"""A run as the viewer shows it: loaded once per change of its files, kept for a few pages.

`RunStore.page(ref)` is the report's own page data (gtog.eval.report._page) of a run,
rebuilt from its checkpoint while it runs, exactly as `gtog eval report` would build it;
`RunStore.card(ref)` is the run list's line, read from the summary alone (or the
checkpoint's line count while a run has no fresh summary), so the list of many runs reads
no detailed results. Both are cached on the files' sizes and times; the page cache holds
a few runs only, so memory grows with the pages shown, not with every run on disk.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog.eval.report._page import page_data
from gtog.eval.report._pagedata import PageData
from gtog.eval.report._publish import load_run
from gtog.eval.results._spec import CHECKPOINT_NAME, SUMMARY_NAME
from gtog.eval.results._spend import SPEND_NAME, cost_line
from gtog.eval.results._verdict import verdict
from gtog.eval.view._catalog import RunRef, run_state, signature

__all__ = ["Card", "Loaded", "RunStore"]

PAGES_KEPT = 4
"""Runs whose page data is kept in memory at once (the pages being looked at)."""


@dataclass(frozen=True)
class Card:
    """A run's line in the run list."""

    name: str
    status: str
    stop_reason: str | None
    questions: int | None
    methods: list[str]
    answers: int | None
    spend: str
    verdict: str | None
    timestamp: str


@dataclass
class Loaded:
    """A run's page data and what the live view reports of it."""

    data: PageData
    detailed: dict[str, Any]
    version: str
    status: str
    stop_reason: str | None
    done: int
    total: int | None
    eta_s: float | None = None
    seen: list[tuple[float, int]] = field(default_factory=list)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _fresh_summary(path: Path) -> dict[str, Any]:
    """The summary when it is at least as new as the checkpoint (else {}: mid-run)."""
    summary, checkpoint = path / SUMMARY_NAME, path / CHECKPOINT_NAME
    try:
        written = summary.stat().st_mtime_ns
    except OSError:
        return {}
    try:
        if checkpoint.stat().st_mtime_ns > written:
            return {}
    except OSError:
        pass
    return _read_json(summary)


def _spend_text(path: Path, summary: dict[str, Any]) -> str:
    cost = summary.get("cost")
    if isinstance(cost, dict) and cost:
        return cost_line(cost).removeprefix("cost: ")
    spend = _read_json(path / SPEND_NAME)
    usd = spend.get("spent_usd", spend.get("usd"))
    return f"${usd:.4f} spent so far" if isinstance(usd, int | float) else ""


def _lines(path: Path) -> int | None:
    """Records in a checkpoint (its complete lines after the header)."""
    try:
        with (path / CHECKPOINT_NAME).open("rb") as f:
            count = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except OSError:
        return None
    return max(count - 1, 0)


class RunStore:
    """Cached cards and pages of runs (thread-safe: pages load in the server's threads)."""

    def __init__(self, pages_kept: int = PAGES_KEPT) -> None:
        self._pages: OrderedDict[Path, tuple[tuple[Any, ...], Loaded]] = OrderedDict()
        self._cards: dict[Path, tuple[tuple[Any, ...], Card]] = {}
        self._lock = threading.Lock()
        self._pages_kept = pages_kept

    def card(self, ref: RunRef) -> Card:
        """The run list's line of `ref` (from its summary, or its checkpoint mid-run)."""
        sig = signature(ref.path)
        with self._lock:
            hit = self._cards.get(ref.path)
        status, reason = run_state(ref.path)
        if hit is not None and hit[0] == sig:
            card = hit[1]
            if card.status == status:
                return card
        summary = _fresh_summary(ref.path)
        meta = summary.get("metadata") if isinstance(summary.get("metadata"), dict) else {}
        if not summary:
            status, reason = run_state(ref.path, {}) if status != "running" else (status, None)
        methods = [str(m) for m in meta.get("methods") or []]
        if not methods:
            methods = _checkpoint_methods(ref.path)
        run = meta.get("run") if isinstance(meta.get("run"), dict) else {}
        card = Card(
            name=ref.name,
            status=status,
            stop_reason=reason,
            questions=meta.get("total_questions"),
            methods=methods,
            answers=run.get("pairs_done") if summary else _lines(ref.path),
            spend=_spend_text(ref.path, summary),
            verdict=verdict(summary) if summary else None,
            timestamp=str(meta.get("timestamp") or ""),
        )
        with self._lock:
            self._cards[ref.path] = (sig, card)
        return card

    def page(self, ref: RunRef) -> Loaded:
        """The run's page data, rebuilt when its files changed."""
        sig = signature(ref.path)
        with self._lock:
            hit = self._pages.get(ref.path)
            if hit is not None:
                self._pages.move_to_end(ref.path)
        status, reason = run_state(ref.path)
        if hit is not None and hit[0] == sig and hit[1].status == status:
            return hit[1]
        detailed, summary, partial = load_run(ref.path)
        data = page_data(detailed, summary, partial=partial)
        meta = summary.get("metadata") or {}
        if status != "running":
            status, reason = run_state(ref.path, {} if partial else meta)
        run = meta.get("run") or {}
        loaded = Loaded(
            data=data,
            detailed=detailed,
            version="-".join(f"{s}.{t}" for _, s, t in sig),
            status=status,
            stop_reason=reason,
            done=int(run.get("pairs_done") or len(data.questions)),
            total=run.get("pairs_total"),
        )
        if hit is not None:
            loaded.seen = hit[1].seen
        _estimate_eta(loaded)
        with self._lock:
            self._pages[ref.path] = (sig, loaded)
            self._pages.move_to_end(ref.path)
            while len(self._pages) > self._pages_kept:
                self._pages.popitem(last=False)
        return loaded


def _estimate_eta(loaded: Loaded) -> None:
    """Seconds left at the pace the viewer has watched the run go (None: not yet known)."""
    if loaded.status != "running":
        loaded.seen.clear()
        return
    now = time.monotonic()
    loaded.seen.append((now, loaded.done))
    del loaded.seen[:-20]
    (t0, d0), (t1, d1) = loaded.seen[0], loaded.seen[-1]
    if loaded.total and d1 > d0 and t1 > t0:
        loaded.eta_s = (loaded.total - d1) * (t1 - t0) / (d1 - d0)


def _checkpoint_methods(path: Path) -> list[str]:
    try:
        with (path / CHECKPOINT_NAME).open("rb") as f:
            header = json.loads(f.readline())
    except (OSError, ValueError):
        return []
    spec = header.get("spec") if isinstance(header, dict) else None
    methods = spec.get("methods") if isinstance(spec, dict) else None
    return [str(m) for m in methods] if isinstance(methods, list) else []

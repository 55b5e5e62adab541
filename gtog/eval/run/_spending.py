"""A run's spending: its model-call cache, its limits, and what it has spent so far.

`OUTPUT/spend.json` keeps what the run has sent to providers over all its sessions (USD,
tokens, calls, seconds; replayed calls are free), so `--resume` continues the same limit:
a run stopped at its limit goes on only with a raised one. Each shard has its own.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import FatalRunError, InputError
from gtog._files import write_json_atomic
from gtog.eval.results._spend import SPEND_NAME
from gtog.llm._budget import Budget, Limits, pair_budget
from gtog.llm._cache import CallStore
from gtog.llm._runcalls import RunCalls, model_calls

if TYPE_CHECKING:
    from gtog.eval.results._records import MethodRecord
    from gtog.eval.run._config import LimitsBlock
    from gtog.eval.run._state import EvalRun

__all__ = [
    "SPEND_NAME",
    "Abandoned",
    "LimitStop",
    "open_spending",
    "pair_limits",
    "pair_spending",
    "run_limits",
    "save_spend",
    "settle_pair",
    "shard_limit_note",
    "spending",
    "spent_figures",
]


class LimitStop(FatalRunError):
    """The run reached a limit of its own and took no more pairs; `reason` is `limit usd`."""

    def __init__(self, what: str, budget: Budget, flag: str) -> None:
        self.reason = f"limit {what}"
        super().__init__(
            f"{self.reason} reached ({budget.describe(what)}); the pairs in flight finished "
            f"and the rest were not started; raise {flag} and rerun with --resume"
        )


def _limits(block: LimitsBlock) -> Limits:
    return Limits(usd=block.usd, tokens=block.tokens, calls=block.calls, time=block.time)


def run_limits(run: EvalRun) -> Limits:
    """The run's limits: `limits.run`, with `--max-usd` over its `usd`."""
    limits = _limits(run.config.limits.run)
    if run.options.max_usd is not None:
        limits = Limits(
            usd=run.options.max_usd, tokens=limits.tokens, calls=limits.calls, time=limits.time
        )
    return limits


def shard_limit_note(limits: Limits, shards: int) -> str | None:
    """With `--shard`, the run's limits bound each shard on its own: one line saying what
    they add up to (None without a shard or a limit)."""
    if shards < 2 or not limits:
        return None
    parts = []
    if limits.usd is not None:
        parts.append(f"${limits.usd:.4f} (up to ${shards * limits.usd:.4f} over {shards} shards)")
    for what in ("tokens", "calls"):
        bound = getattr(limits, what)
        if bound is not None:
            parts.append(f"{bound} {what} (up to {shards * bound} over {shards} shards)")
    if limits.time is not None:
        parts.append(f"{limits.time:g} s")
    return (
        f"note: the run's limits are per shard: each of the {shards} shards may spend "
        f"{', '.join(parts)}; for a total, give each shard its share (--max-usd TOTAL/{shards})"
    )


def pair_limits(run: EvalRun) -> Limits:
    """Each question-method pair's limits (`limits.pair`)."""
    return _limits(run.config.limits.pair)


def _unpriced(run: EvalRun) -> list[str]:
    """`provider/model` of every model of the run without a known price."""
    from gtog.llm._usage import price_source

    out = []
    for project in run.projects.values():
        models = [*project.config.completion_models.values()]
        models += [*project.config.embedding_models.values()]
        out += [f"{m.model_provider}/{m.model}" for m in models if price_source(m) is None]
    return sorted(set(out))


def _read_spend(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def open_spending(run: EvalRun) -> None:
    """Set up `run.calls` (the cache, unless off) and `run.budget` (the run's limits, with
    what earlier sessions of the run spent). A USD limit needs every model's price."""
    if run.cache_dir is not None:
        run.calls = RunCalls(store=CallStore(run.cache_dir))
    else:
        run.calls = RunCalls(store=None)
    limits = run_limits(run)
    budget = Budget(limits)
    if run.mode != "new":
        spent = _read_spend(run.output_dir / SPEND_NAME)
        budget.usd = float(spent.get("usd") or 0.0)
        budget.tokens = int(spent.get("tokens") or 0)
        budget.calls = int(spent.get("calls") or 0)
        budget.offset = float(spent.get("seconds") or 0.0)
        budget.usd_unknown = bool(spent.get("usd_unknown"))
    run.budget = budget
    if limits.usd is not None or pair_limits(run).usd is not None:
        unpriced = _unpriced(run)
        if unpriced:
            raise InputError(
                f"{_usd_limit_source(run)}: a USD limit needs the price of every model; "
                f"none is known for {', '.join(unpriced)} (give it `cost_per_1k: {{input: "
                "..., output: ...}` in its settings.yaml entry, USD per 1,000 tokens)"
            )


def _usd_limit_source(run: EvalRun) -> str:
    """Who set the run's USD limits: `--max-usd`, and/or `CONFIG: limits.run.usd` /
    `limits.pair.usd`."""
    keys = []
    if run.options.max_usd is None and run.config.limits.run.usd is not None:
        keys.append("limits.run.usd")
    if run.config.limits.pair.usd is not None:
        keys.append("limits.pair.usd")
    config = f"{run.config_path}: {' and '.join(keys)}" if keys else ""
    if run.options.max_usd is None:
        return config
    return "--max-usd" + (f" (and {config})" if config else "")


def spent_figures(budget: Budget) -> dict[str, Any]:
    """What `budget` has sent to providers, as spend.json holds it."""
    return {
        "usd": budget.usd,
        "tokens": budget.tokens,
        "calls": budget.calls,
        "seconds": budget.seconds(),
        "usd_unknown": budget.usd_unknown,
        "cached_calls": budget.cached_calls,
        "usd_saved": budget.saved_usd,
        "limit_usd": budget.limits.usd,
    }


def save_spend(run: EvalRun, *, changed: bool = False) -> None:
    """Write `OUTPUT/spend.json` (blocking: call it off the event loop); with `changed`,
    only when what was spent or replayed changed since the last write (a record that
    made no call, an answers file's, does not rewrite and fsync it; the elapsed time it
    also holds is written with the next call's record and when the run ends)."""
    if run.budget is None:
        return
    with _writing:  # (records land in several threads at once)
        figures = spent_figures(run.budget)
        spent = tuple(v for k, v in figures.items() if k != "seconds")
        if changed and spent == run.spend_written:
            return
        write_json_atomic(run.output_dir / SPEND_NAME, figures)
        run.spend_written = spent


_writing = threading.Lock()


@contextmanager
def spending(run: EvalRun) -> Iterator[None]:
    """The run's model calls go through its cache and are charged to its limits."""
    with model_calls(run.calls, run.budget):
        yield


class Abandoned(Exception):
    """A pair the run's limit stopped part-way: not recorded (its finished calls are in
    the cache, so `--resume` pays only for what it had not done)."""


@contextmanager
def pair_spending(run: EvalRun) -> Iterator[Budget]:
    """A budget for the calls of one pair (its search and its judges) made in the block,
    each request sent once the pair's earlier replies are in the cache."""
    from gtog.llm._gate import pair_writes  # (graphrag's cache config: once calls are due)

    with pair_budget(pair_limits(run)) as budget, pair_writes():
        yield budget


def settle_pair(record: MethodRecord, budget: Budget) -> None:
    """After a pair: `Abandoned` when the run's limit refused one of its calls; the pair's
    error (kind `limit`, no scores) when it went over a limit of its own."""
    if budget.run_refused:
        raise Abandoned(record.key)
    what = budget.over()
    if what is None:
        return
    record.error = f"pair limit {what} reached ({budget.describe(what)})"
    record.error_kind = "limit"
    record.judgements = {}

"""The error budget: stop a run when failures show that no later item can succeed."""

from __future__ import annotations

import math

from gtog._errors import FatalRunError, InputError
from gtog.eval.results._records import MethodRecord
from gtog.eval.scoring._base import uses_llm

__all__ = ["EARLY_FAILURES", "Guard", "failure_kind", "parse_budget"]

EARLY_FAILURES = 5
"""Stop when this many first finished pairs all failed the same way and none succeeded."""


def parse_budget(value: str | None, total: int) -> int | None:
    """`--max-errors`: a count or a share (`5%`) of `total` pairs; None = no budget."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        if text.endswith("%"):
            share = float(text[:-1])
            if not 0 <= share <= 100:
                raise ValueError
            return math.floor(share / 100 * total)
        count = int(text)
        if count < 0:
            raise ValueError
        return count
    except ValueError:
        raise InputError(
            f"--max-errors: {value!r} is not a count (10) or a share of the pairs (5%)"
        ) from None


class Guard:
    """Stops the run when failures show that no later item can succeed."""

    def __init__(self, budget: int | None) -> None:
        self.budget = budget
        self.failed = 0
        self.succeeded = 0
        self.first_kinds: list[str] = []
        self.stop: FatalRunError | None = None
        """Why the run stops, once it must: no pair starts after this is set."""

    def observe(self, record: MethodRecord) -> None:
        """Count `record`; raise (and keep in `stop`) when the run must stop."""
        if self.stop is None:
            try:
                self._count(record)
            except FatalRunError as exc:
                self.stop = exc
        if self.stop is not None:
            raise self.stop

    def _count(self, record: MethodRecord) -> None:
        kind = failure_kind(record)
        if kind is None:
            self.succeeded += 1
            return
        self.failed += 1 if record.error else 0
        if not self.succeeded and len(self.first_kinds) < EARLY_FAILURES:
            self.first_kinds.append(kind)
            if len(self.first_kinds) == EARLY_FAILURES and len(set(self.first_kinds)) == 1:
                raise FatalRunError(
                    f"the first {EARLY_FAILURES} answers all failed ({kind}: "
                    f"{_failure_message(record)}); stopped; fix the cause and rerun with --resume"
                )
        if self.budget is not None and self.failed > self.budget:
            raise FatalRunError(
                f"error budget spent: {self.failed} searches failed (--max-errors allows "
                f"{self.budget}); last: {_failure_message(record)}; rerun with --resume "
                "--retry-errors after the fix"
            )


def failure_kind(record: MethodRecord) -> str | None:
    if record.error:
        return f"search {record.error_kind or 'error'}"
    llm = [j for m, j in record.judgements.items() if uses_llm(m)]
    if llm and all(j.error for j in llm):
        return "judges " + (llm[0].error or "").split(":", 1)[0][:40]
    return None


def _failure_message(record: MethodRecord) -> str:
    if record.error:
        return record.error[:200]
    return next((j.error or "" for j in record.judgements.values() if j.error), "")[:200]

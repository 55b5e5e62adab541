"""The viewer's question list: one row per (question, method), and the filters a person asks.

Pure functions of the report's page data (gtog.eval.report._models.Question) and of the
detailed results' panel verdicts. A filter is a `Filters` read from the page's URL, so every
view of the list has an address. A verdict is the report's: a score from 0.5 up is right,
below is wrong, a failed search or judge call or a missing score is unscored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode

from gtog.eval.report._models import Answer, Question
from gtog.eval.results._abstention import AbstentionRules
from gtog.eval.results._errors import error_kind

__all__ = ["PAGE_ROWS", "Filters", "Row", "filter_rows", "rows_of", "verdict_of"]

PAGE_ROWS = 100
"""Rows shown per page of the list."""

CUT = 0.5
_RULES = AbstentionRules()


@dataclass(frozen=True)
class Row:
    """One method's answer to one question, with what the filters look at."""

    question: Question
    answer: Answer
    verdict: str
    """`right`, `wrong` or `unscored` on the metric shown."""
    error: str | None
    """The failure's kind (search or judge), None when nothing failed."""
    abstained: bool
    split: bool
    """The judge panel's models disagreed on this answer (any metric)."""


@dataclass(frozen=True)
class Filters:
    """What the list is narrowed to (each empty field: no narrowing)."""

    metric: str = ""
    method: str = ""
    verdict: str = ""
    index: str = ""
    error: str = ""
    abstained: bool = False
    split: bool = False
    right: str = ""
    """Only questions the method `right` got right…"""
    wrong: str = ""
    """…and the method `wrong` got wrong (either alone works too)."""
    text: str = ""
    groups: dict[str, str] = field(default_factory=dict)
    page: int = 1

    @classmethod
    def from_query(cls, query: Mapping[str, str], metric: str) -> Filters:
        """The filters of a page's query string (`g.FIELD=VALUE` for a group field)."""
        try:
            page = max(int(query.get("page", "1")), 1)
        except ValueError:
            page = 1
        return cls(
            metric=query.get("metric") or metric,
            method=query.get("method", ""),
            verdict=query.get("verdict", ""),
            index=query.get("index", ""),
            error=query.get("error", ""),
            abstained=query.get("abstained") == "1",
            split=query.get("split") == "1",
            right=query.get("right", ""),
            wrong=query.get("wrong", ""),
            text=query.get("q", "").strip(),
            groups={k[2:]: v for k, v in query.items() if k.startswith("g.") and v},
            page=page,
        )

    def query(self, **changes: Any) -> str:
        """This filter's query string, with `changes` (e.g. another page)."""
        f = replace(self, **changes) if changes else self
        pairs = [
            ("metric", f.metric),
            ("method", f.method),
            ("verdict", f.verdict),
            ("index", f.index),
            ("error", f.error),
            ("abstained", "1" if f.abstained else ""),
            ("split", "1" if f.split else ""),
            ("right", f.right),
            ("wrong", f.wrong),
            ("q", f.text),
            *((f"g.{k}", v) for k, v in sorted(f.groups.items())),
            ("page", str(f.page) if f.page > 1 else ""),
        ]
        return urlencode([(k, v) for k, v in pairs if v])


def verdict_of(answer: Answer, metric: str) -> str:
    """`right`, `wrong` or `unscored` (a failed or out-of-date answer is unscored)."""
    score = answer.scores.get(metric)
    if answer.error or answer.stale or score is None:
        return "unscored"
    return "right" if score >= CUT else "wrong"


def _failure(answer: Answer) -> str | None:
    if answer.error:
        return error_kind(answer.error, answer.error_kind)
    for message in answer.judge_errors.values():
        return "judge: " + error_kind(message)
    return None


def _splits(detailed: dict[str, Any]) -> set[tuple[str, str]]:
    """(question id, method) of the answers a judge panel's models disagreed on."""
    out = set()
    for q in detailed.get("results") or []:
        if not isinstance(q, dict):
            continue
        for method, entry in (q.get("methods") or {}).items():
            panel = entry.get("panel") if isinstance(entry, dict) else None
            for verdicts in (panel or {}).values():
                scores = {v.get("score") for v in verdicts.values() if isinstance(v, dict)}
                if len(scores - {None}) > 1:
                    out.add((str(q.get("question_id", "")), method))
    return out


def rows_of(questions: list[Question], detailed: dict[str, Any], metric: str) -> list[Row]:
    """Every (question, method) of the run, in the report's order."""
    splits = _splits(detailed)
    return [
        Row(
            question=q,
            answer=a,
            verdict=verdict_of(a, metric),
            error=_failure(a),
            abstained=a.error is None and _RULES.abstains(a.response),
            split=(q.qid, a.method) in splits,
        )
        for q in questions
        for a in q.answers
    ]


def _verdicts(q: Question, metric: str) -> dict[str, str]:
    return {a.method: verdict_of(a, metric) for a in q.answers}


def filter_rows(rows: list[Row], f: Filters) -> list[Row]:
    """The rows `f` keeps."""
    text = f.text.lower()
    out = []
    cross: dict[str, bool] = {}
    for row in rows:
        q = row.question
        if f.right or f.wrong:
            if q.qid not in cross:
                v = _verdicts(q, f.metric)
                cross[q.qid] = (not f.right or v.get(f.right) == "right") and (
                    not f.wrong or v.get(f.wrong) == "wrong"
                )
            if not cross[q.qid]:
                continue
        if f.method and row.answer.method != f.method:
            continue
        if f.verdict and row.verdict != f.verdict:
            continue
        if f.index and q.index_key != f.index:
            continue
        if f.error and (row.error or "") != f.error and not (f.error == "any" and row.error):
            continue
        if f.abstained and not row.abstained:
            continue
        if f.split and not row.split:
            continue
        if any(q.groups.get(k) != v for k, v in f.groups.items()):
            continue
        if text and not _matches(row, text):
            continue
        out.append(row)
    return out


def _matches(row: Row, text: str) -> bool:
    q, a = row.question, row.answer
    return any(
        text in (s or "").lower() for s in (q.qid, q.question, q.ground_truth, a.response, a.error)
    )

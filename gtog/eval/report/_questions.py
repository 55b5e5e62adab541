"""The question list's data, and what is counted from it: errors, stages, spreads.

Pure functions of the detailed results (`results[*].methods[*]`); see gtog.eval.report._page
for the page as a whole.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from gtog.eval.report._claims import answer_assertions
from gtog.eval.report._markup import Markup, el, join
from gtog.eval.report._models import Answer, ErrorCount, Question, Spread
from gtog.eval.report._readers import as_dict, as_int, as_num, as_str
from gtog.eval.report._tree import exploration_tree
from gtog.eval.report._versus import question_pairs
from gtog.eval.results._errors import error_kind
from gtog.eval.results._flat import flag_column
from gtog.eval.scoring._citations import VALIDITY, cited

__all__ = [
    "answers_of",
    "error_counts",
    "error_kind",
    "question",
    "spreads",
    "stage_calls",
    "tog_paths",
]

_PATHS_RE = re.compile(r"-----Paths-----\n[^\n]*\n(.*?)(?:\n\n|\Z)", re.S)


def tog_paths(context: str | None) -> list[str]:
    """ToG's reasoning paths (`score  A -[rel]-> B`) from its evidence text."""
    if not context:
        return []
    m = _PATHS_RE.search(context)
    if not m:
        return []
    out = []
    for line in m.group(1).splitlines():
        parts = line.split("|", 2)
        if len(parts) == 3:
            out.append(f"{parts[1]}  {parts[2]}")
        elif line.strip():
            out.append(line.strip())
    return out


def _flagged(entry: dict[str, Any]) -> dict[str, list[str]]:
    """What each metric found wrong in the answer, by what it is (`invalid citations`)."""
    out: dict[str, list[str]] = {}
    for metric, items in as_dict(entry.get("flagged")).items():
        column = flag_column(str(metric))
        if column and isinstance(items, list) and items:
            out.setdefault(column.replace("_", " "), []).extend(str(i) for i in items)
    return out


def marked_response(response: str | None, invalid: list[str]) -> Markup | None:
    """The response with each cited id not in the context in a `<mark>` (None: none)."""
    if not response or not invalid:
        return None
    bad = set(invalid)
    parts: list[Markup | str] = []
    pos = 0
    for c in cited(response):
        if c.label in bad:
            parts += [
                response[pos : c.start],
                el("mark", {"class": "bad-cite", "title": f"{c.label}: not in the context"}, c.id),
            ]
            pos = c.end
    return join([*parts, response[pos:]]) if parts else None


def _answer(method: str, entry: dict[str, Any], metrics: list[str]) -> Answer:
    scores_raw = as_dict(entry.get("scores"))
    reasons_raw = as_dict(entry.get("reasons"))
    judge_errors = {k: str(v) for k, v in as_dict(entry.get("judge_errors")).items() if v}
    eff = as_dict(entry.get("efficiency"))
    calls = {k: int(v) for k, v in as_dict(eff.get("llm_calls_categories")).items() if as_int(v)}
    context = as_str(entry.get("context_text"))
    sources = entry.get("sources")
    source_ids = [str(s.get("id")) for s in sources or [] if isinstance(s, dict) and "id" in s]
    keys = [m for m in metrics if m in scores_raw] + [m for m in scores_raw if m not in metrics]
    return Answer(
        method=method,
        response=as_str(entry.get("response")),
        error=as_str(entry.get("error")),
        error_kind=as_str(entry.get("error_kind")),
        scores={m: as_num(scores_raw.get(m)) for m in keys},
        reasons={m: as_str(reasons_raw.get(m)) for m in keys},
        judge_errors=judge_errors,
        latency=_latency(eff),
        llm_calls=as_int(eff.get("llm_calls")),
        prompt_tokens=as_int(eff.get("prompt_tokens")),
        output_tokens=as_int(eff.get("output_tokens")),
        cost_usd=as_num(eff.get("cost_usd")),
        calls_by_stage=calls,
        paths=tog_paths(context) if method == "tog" else [],
        context=context,
        source_ids=source_ids,
        stale=as_str(entry.get("stale")),
        tree=exploration_tree(entry.get("exploration"), entry.get("paths")),
        assertions=answer_assertions(entry),
        flagged=_flagged(entry),
        marked=marked_response(
            as_str(entry.get("response")), as_dict(entry.get("flagged")).get(VALIDITY) or []
        ),
    )


def question(
    raw: dict[str, Any],
    methods: list[str],
    metrics: list[str],
    primary: str,
    criteria: list[str] | None = None,
) -> Question:
    """One entry of the detailed results' `results`, with its answers in `methods` order
    (and its head-to-head verdicts, in `criteria` order)."""
    entries = as_dict(raw.get("methods"))
    order = [m for m in methods if m in entries] + [m for m in entries if m not in methods]
    answers = [_answer(m, as_dict(entries[m]), metrics) for m in order]
    # an out-of-date answer or verdict is shown, marked, but never flags the question
    primary_scores = [a.scores.get(primary) for a in answers if a.error is None and not a.stale]
    known = [s for s in primary_scores if s is not None]
    gold = raw.get("evidence", raw.get("context"))
    return Question(
        qid=str(raw.get("question_id", "")),
        index_key=str(raw.get("imdb_key", raw.get("index_key", ""))),
        question=str(raw.get("question", "")),
        ground_truth=str(raw.get("ground_truth", "")),
        gold_evidence=gold if isinstance(gold, str) and gold.strip() else None,
        answers=answers,
        disagree=len({round(s, 6) for s in known}) > 1,
        failed=any(a.error or a.judge_errors for a in answers),
        wrong=any(s < 0.5 for s in known),
        groups={
            str(k): str(v)
            for k, v in as_dict(raw.get("groups")).items()
            if isinstance(v, str | int | float) and not isinstance(v, bool)
        },
        pairs=question_pairs(raw.get("pairwise"), criteria, methods),
    )


def answers_of(questions: list[Question], method: str, key: str | None = None) -> list[Answer]:
    """The method's successful answers (on index `key` when given)."""
    return [
        a
        for q in questions
        if key is None or q.index_key == key
        for a in q.answers
        if a.method == method and a.error is None
    ]


def stage_calls(questions: list[Question], methods: list[str]) -> dict[str, dict[str, float]]:
    """method -> stage -> mean LLM calls per successful answer (methods that report stages)."""
    out: dict[str, dict[str, float]] = {}
    for method in methods:
        ok = answers_of(questions, method)
        stages = list(dict.fromkeys(s for a in ok for s in a.calls_by_stage))
        if ok and stages:
            out[method] = {
                s: float(np.mean([a.calls_by_stage.get(s, 0) for a in ok])) for s in stages
            }
    return out


def _latency(eff: dict[str, Any]) -> float | None:
    """An answer's latency, None when it replayed a chat call from the cache (as the
    summary's `measured_latency`: an older gtog recorded the cache's wall time)."""
    cached, embeddings = as_int(eff.get("cached_calls")) or 0, as_int(eff.get("embedding_calls"))
    if cached > (embeddings or 0):
        return None
    return as_num(eff.get("latency"))


def spreads(questions: list[Question], methods: list[str], figure: str) -> list[Spread]:
    """Per method, the spread of `figure` (`latency` or `llm_calls`) over successful answers."""
    out = []
    for method in methods:
        values = [getattr(a, figure) for a in answers_of(questions, method)]
        spread = Spread.of(method, [float(v) for v in values if v is not None])
        if spread is not None:
            out.append(spread)
    return out


def error_counts(questions: list[Question], methods: list[str]) -> list[ErrorCount]:
    """Failures per method, place (search or judge metric) and kind, with an example.

    Kinds come from the one classifier (`gtog.eval.results._errors.error_kind`), as in the
    summary's `metadata.errors`: a failed search's recorded `error_kind` when it has one.
    """
    counts: dict[tuple[str, str, str], list[str]] = {}
    for q in questions:
        for a in q.answers:
            if a.error:
                kind = error_kind(a.error, a.error_kind)  # the kind the run recorded, first
                counts.setdefault((a.method, "search", kind), []).append(a.error)
            for metric, message in a.judge_errors.items():
                key = (a.method, f"judge: {metric}", error_kind(message))
                counts.setdefault(key, []).append(message)
    rank = {m: i for i, m in enumerate(methods)}
    return [
        ErrorCount(method, where, kind, len(messages), messages[0])
        for (method, where, kind), messages in sorted(
            counts.items(), key=lambda kv: (rank.get(kv[0][0], 99), kv[0][1], -len(kv[1]))
        )
    ]

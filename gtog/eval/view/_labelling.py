"""The viewer's label mode: a person's verdicts on a run's sample, one answer at a time.

`/label/NAME?metric=M&labeller=WHO` shows the next answer of the run's label sample
(gtog.eval.results._labels.label_sample: seeded, stratified by method; `per_method` 50 and
`seed` 0 unless the address says otherwise) that this labeller has not labelled: the
question, the reference, the answer, and the context when the metric judges against it.
The judge's own verdict is not shown (it would anchor the person). Right, wrong or skip are
posted to `/labels/NAME`, and so is an undo (the labeller's last label taken back); each is
one line appended to OUTPUT/labels.jsonl, the only file the viewer ever writes.

A post must be JSON with the `X-Gtog-Label` header (a page of another site cannot send
that without the browser asking this server first, which it does not allow) and, when the
browser names its origin, from this server's own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from gtog.eval.results._label_files import CONTEXT_METRICS
from gtog.eval.results._labels import (
    SKIP,
    Label,
    answer_hash,
    append_labels,
    label_sample,
    labellable_metrics,
    now,
    read_labels,
)
from gtog.eval.results._log import read_log
from gtog.eval.results._records import MethodRecord
from gtog.eval.view._catalog import RunRef

__all__ = ["LABEL_HEADER", "LabelPage", "LabelRefused", "label_page", "post_label"]

LABEL_HEADER = "x-gtog-label"
PER_METHOD = 50


@dataclass(frozen=True)
class LabelPage:
    """What the label page shows."""

    metric: str
    metrics: list[str]
    labeller: str
    per_method: int
    seed: int
    item: MethodRecord | None
    """The next answer to label (None: this labeller has done the whole sample)."""
    show_context: bool
    position: int
    """How many of the sample this labeller has labelled or skipped."""
    size: int
    by_anyone: int
    """Answers of the sample anybody has labelled."""


def _int(value: str | None, default: int) -> int:
    try:
        return max(int(value or default), 1 if default else 0)
    except ValueError:
        return default


def _settings(request: Request, metrics: list[str]) -> tuple[str, str, int, int]:
    q = request.query_params
    metric = q.get("metric") or (metrics[0] if metrics else "")
    return (
        metric,
        (q.get("labeller") or "").strip()[:80],
        _int(q.get("per_method"), PER_METHOD),
        _int(q.get("seed"), 0),
    )


def label_page(ref: RunRef, request: Request) -> LabelPage:
    """The label page of run `ref` for the address's metric, labeller and sample."""
    log = read_log(ref.path)
    metrics = labellable_metrics(log.spec.judge.metrics)
    metric, labeller, per_method, seed = _settings(request, metrics)
    sample = label_sample(log.records, metric, per_method, seed) if metric in metrics else []
    mine: dict[tuple[str, str, int], Any] = {}
    anyone: set[tuple[str, str, int]] = set()
    for x in read_labels(ref.path):
        if x.metric != metric:
            continue
        key = (x.question_id, x.method, x.epoch)
        if x.labeller == labeller:
            mine[key] = x.label
        if x.label in (0, 1):
            anyone.add(key)
    done = {k for k, v in mine.items() if v is not None}
    keys = [(r.qid, r.method, r.epoch) for r in sample]
    item = next((r for r, k in zip(sample, keys, strict=True) if k not in done), None)
    return LabelPage(
        metric=metric,
        metrics=metrics,
        labeller=labeller,
        per_method=per_method,
        seed=seed,
        item=item if labeller else None,
        show_context=metric in CONTEXT_METRICS,
        position=sum(k in done for k in keys),
        size=len(sample),
        by_anyone=sum(k in anyone for k in keys),
    )


class LabelRefused(Exception):
    """A post the viewer will not write (`status`, and why)."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


def _answers(ref: RunRef) -> tuple[dict[tuple[str, str, int], MethodRecord], list[str]]:
    log = read_log(ref.path)
    return (
        {(r.qid, r.method, r.epoch): r for r in log.records},
        labellable_metrics(log.spec.judge.metrics),
    )


def post_label(ref: RunRef, headers: dict[str, str], host: str, body: bytes) -> Label:
    """Append the posted label (or undo) to the run's labels.jsonl; the line written."""
    if headers.get(LABEL_HEADER) != "1":
        raise LabelRefused(403, f"a label needs the {LABEL_HEADER} header")
    origin = headers.get("origin")
    if origin and origin.split("://", 1)[-1] != host:
        raise LabelRefused(403, f"a label from another origin ({origin}) is refused")
    try:
        data = json.loads(body)
    except ValueError:
        raise LabelRefused(400, "a label is a JSON object") from None
    if not isinstance(data, dict):
        raise LabelRefused(400, "a label is a JSON object")
    labeller = str(data.get("labeller") or "").strip()[:80]
    metric = str(data.get("metric") or "")
    if not labeller:
        raise LabelRefused(400, "a label needs the labeller's name")
    answers, metrics = _answers(ref)
    if metric not in metrics:
        raise LabelRefused(400, f"{metric!r} is not a judge metric of this run to label")
    if data.get("undo"):
        return _undo(ref, labeller, metric, answers)
    value = data.get("label")
    if value not in (0, 1, SKIP) or isinstance(value, bool):
        raise LabelRefused(400, "label is 1 (right), 0 (wrong) or skip")
    try:
        key = (str(data["question_id"]), str(data["method"]), int(data.get("epoch") or 1))
    except (KeyError, ValueError):
        raise LabelRefused(400, "a label names question_id, method and epoch") from None
    record = answers.get(key)
    if record is None:
        raise LabelRefused(404, "no such answer in this run")
    if data.get("answer_hash") != answer_hash(record.response):
        raise LabelRefused(409, "the answer changed since the page was shown: reload it")
    line = Label(*key, metric, value, labeller, now(), answer_hash(record.response))
    append_labels(ref.path, [line])
    return line


def _undo(
    ref: RunRef, labeller: str, metric: str, answers: dict[tuple[str, str, int], MethodRecord]
) -> Label:
    """Take back the labeller's last label or skip on `metric`."""
    last: dict[tuple[str, str, int], Label] = {}
    order: list[tuple[str, str, int]] = []
    for x in read_labels(ref.path):
        if x.labeller == labeller and x.metric == metric:
            key = (x.question_id, x.method, x.epoch)
            last[key] = x
            if key in order:
                order.remove(key)
            order.append(key)
    live = [k for k in order if last[k].label is not None and k in answers]
    if not live:
        raise LabelRefused(409, "nothing to undo")
    key = live[-1]
    line = Label(*key, metric, None, labeller, now(), last[key].answer_hash)
    append_labels(ref.path, [line])
    return line

"""Redaction of keys, the one prompt renderer, and checkpoint lines that hold any text."""

from __future__ import annotations

import logging
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gtog._prompts import placeholders, render_prompt
from gtog._redact import MASK, RedactingFilter, Redactor
from gtog.eval.results._log import read_checkpoint
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec
from gtog.eval.run._checkpoint import Checkpoint

KEY = "sk-proj-AbCdEfGh1234567890ZyXw"


def test_redactor_masks_whole_and_truncated_keys() -> None:
    r = Redactor([KEY, None, "short"])
    assert r(f"key={KEY}!") == f"key={MASK}!"
    assert KEY[-4:] not in r("Incorrect API key provided: sk-proj-**********************ZyXw.")
    assert "sk-proj-Ab" not in r("key sk-proj-AbCd...ZyXw was refused")
    assert r("short words stay, and so does ZyXw alone") == (
        "short words stay, and so does ZyXw alone"
    )


def test_log_filter_masks_messages_and_tracebacks(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    handler = logging.FileHandler(path)
    handler.addFilter(RedactingFilter(Redactor([KEY])))
    log = logging.getLogger("gtog.test.redact")
    log.addHandler(handler)
    try:
        raise RuntimeError(f"401 for key {KEY}")
    except RuntimeError:
        log.exception("call with %s failed", KEY)
    handler.close()
    log.removeHandler(handler)
    text = path.read_text()
    assert KEY not in text and text.count(MASK) == 2 and "RuntimeError" in text


def test_renderer_fills_each_placeholder_once() -> None:
    template = 'Q: {question}\nA: $answer\nJSON: {"score": 0 or 1}\n${unknown}'
    out = render_prompt(template, {"question": "what is {answer}?", "answer": "$question"})
    assert out == 'Q: what is {answer}?\nA: $question\nJSON: {"score": 0 or 1}\n${unknown}'
    assert placeholders(template) == {"question", "answer", "unknown"}


SPEC = EvalSpec(dataset=DatasetSpec(path="d", hash="h", questions=1), methods=["local"])


@settings(max_examples=60, deadline=None)
@given(st.text(), st.text())
def test_checkpoint_round_trips_any_text(tmp_path_factory, answer: str, question: str) -> None:
    path = tmp_path_factory.mktemp("cp") / "cp.jsonl"
    records = [
        MethodRecord(
            qid=str(i),
            index_key="k",
            question=question,
            reference="r",
            method="local",
            response=text,
        )
        for i, text in enumerate([answer, "a\u2028b\u2029c\x85d 🙂 שלום", answer[::-1]])
    ]
    cp = Checkpoint.create(path, SPEC)
    for r in records:
        cp.append(r)
    cp.close()
    spec, read, intact = read_checkpoint(path)
    assert spec == SPEC and read == records and intact == path.stat().st_size

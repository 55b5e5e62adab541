"""QA datasets in the two shapes users have, normalised to `QAItem`.

Shape A: one file, a list of `{imdb_key, question, answer}` (`id`/`qid` optional).
Shape B: one file per index key (`<key>.json` in a folder, or a single file whose stem is
the key), a list of `{question, ground_truth, context}` where `context` is gold evidence.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from gtog.errors import InputError

__all__ = ["QAItem", "dataset_fingerprint", "load_dataset", "question_id"]


class QAItem(BaseModel):
    """One question of the dataset."""

    model_config = ConfigDict(frozen=True)

    qid: str
    index_key: str
    question: str
    reference: str
    evidence: str | None = None


def question_id(index_key: str, question: str) -> str:
    """A stable id for a question without one: a hash of its index key and text."""
    digest = hashlib.sha256(f"{index_key}\x1f{question.strip()}".encode()).hexdigest()
    return f"{index_key}-{digest[:12]}"


def _read_list(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read dataset ({exc.strerror})") from None
    try:
        if path.suffix == ".jsonl":
            data: Any = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None
    if isinstance(data, dict):
        # tolerate {"questions": [...]} / {"data": [...]} wrappers
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data = lists[0]
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of question objects")
    return data


def _text(path: Path, i: int, item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{path}: item {i}: field {key!r} must be a non-empty string")
    return value


def _shape_of(item: dict[str, Any]) -> str | None:
    if "question" in item and "answer" in item and "imdb_key" in item:
        return "A"
    if "question" in item and "ground_truth" in item:
        return "B"
    return None


def _items_from_file(path: Path, key_from_name: str | None) -> list[QAItem]:
    items: list[QAItem] = []
    for i, raw in enumerate(_read_list(path)):
        if not isinstance(raw, dict):
            raise InputError(f"{path}: item {i}: expected an object, got {type(raw).__name__}")
        shape = _shape_of(raw)
        if shape is None:
            raise InputError(
                f"{path}: item {i}: neither dataset shape fits: expected "
                "{imdb_key, question, answer} or {question, ground_truth, context}; "
                f"got fields {sorted(raw)}"
            )
        question = _text(path, i, raw, "question")
        if shape == "A":
            index_key = _text(path, i, raw, "imdb_key")
            reference = _text(path, i, raw, "answer")
            evidence = raw.get("context") if isinstance(raw.get("context"), str) else None
        else:
            index_key = raw.get("imdb_key") or key_from_name
            if not index_key:
                raise InputError(f"{path}: item {i}: no index key (name the file <key>.json)")
            reference = _text(path, i, raw, "ground_truth")
            context = raw.get("context")
            if isinstance(context, list):
                context = "\n\n".join(str(c) for c in context)
            evidence = context if isinstance(context, str) else None
        given = raw.get("id", raw.get("qid"))
        qid = str(given) if given not in (None, "") else question_id(index_key, question)
        items.append(
            QAItem(
                qid=qid,
                index_key=str(index_key),
                question=question,
                reference=reference,
                evidence=evidence,
            )
        )
    return items


def load_dataset(path: Path) -> list[QAItem]:
    """Load a dataset file or a folder of per-index files; ids must be unique."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".json", ".jsonl"))
        if not files:
            raise InputError(f"{path}: dataset folder has no .json or .jsonl files")
        items = [item for f in files for item in _items_from_file(f, f.stem)]
    elif path.is_file():
        items = _items_from_file(path, path.stem)
    else:
        raise InputError(f"{path}: dataset not found")
    seen: dict[str, QAItem] = {}
    for item in items:
        if item.qid in seen:
            raise InputError(f"{path}: duplicate question id {item.qid!r}")
        seen[item.qid] = item
    if not items:
        raise InputError(f"{path}: dataset has no questions")
    return items


def dataset_fingerprint(items: list[QAItem]) -> str:
    """A hash of the questions and references (detects a changed dataset on resume)."""
    h = hashlib.sha256()
    for item in sorted(items, key=lambda x: x.qid):
        h.update(json.dumps(item.model_dump(), sort_keys=True).encode())
    return h.hexdigest()[:16]

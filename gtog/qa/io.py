"""Reading, validating and writing QA evaluation data (YAML or JSON)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "MEDIA_TYPES",
    "InputError",
    "dump_data",
    "load_data",
    "responses_by_id",
    "validate_reference",
    "validate_responses",
]

MEDIA_TYPES = ("application/sparql-results+json", "application/json")


class InputError(ValueError):
    """Invalid input; the message names the source and the offending field."""


def load_data(path: str | Path) -> Any:
    """Parsed content of a `.json` file, or of YAML otherwise."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from exc
    try:
        return json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
        raise InputError(f"{p}: not valid {kind}: {first}") from exc


def dump_data(path: str | Path, data: Any) -> None:
    """Write `data` as JSON (`.json`) or YAML, atomically (a temp file then rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fail(source: str, field: str, problem: str) -> InputError:
    return InputError(f"{source}: {field}: {problem}")


def _check_step(step: Any, source: str, field: str, reference: bool) -> None:
    if not isinstance(step, Mapping):
        raise _fail(source, field, "must be a mapping")
    if not isinstance(step.get("name"), str) or not step["name"]:
        raise _fail(source, f"{field}.name", "required string")
    if "args" in step and step["args"] is not None and not isinstance(step["args"], Mapping):
        raise _fail(source, f"{field}.args", "must be a mapping")
    if reference:
        if "output" not in step:
            raise _fail(source, f"{field}.output", "required")
        media = step.get("output_media_type")
        if media is not None and media not in MEDIA_TYPES:
            raise _fail(source, f"{field}.output_media_type", f"must be one of {MEDIA_TYPES}")
        columns = step.get("required_columns")
        if columns is not None and (
            not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
        ):
            raise _fail(source, f"{field}.required_columns", "must be a list of strings")
        for flag in ("ordered", "ignore_duplicates"):
            if flag in step and not isinstance(step[flag], bool):
                raise _fail(source, f"{field}.{flag}", "must be true or false")
    else:
        status = step.get("status", "success")
        if status not in ("success", "error"):
            raise _fail(source, f"{field}.status", "must be 'success' or 'error'")


def validate_reference(data: Any, source: str = "reference") -> None:
    """Raise `InputError` unless `data` is a list of templates with valid questions."""
    if not isinstance(data, list):
        raise _fail(source, "(top level)", "must be a list of templates")
    seen: set[str] = set()
    for t, template in enumerate(data):
        where = f"[{t}]"
        if not isinstance(template, Mapping):
            raise _fail(source, where, "must be a mapping")
        if template.get("template_id") in (None, ""):
            raise _fail(source, f"{where}.template_id", "required")
        questions = template.get("questions")
        if not isinstance(questions, list):
            raise _fail(source, f"{where}.questions", "must be a list")
        for q, question in enumerate(questions):
            qwhere = f"{where}.questions[{q}]"
            if not isinstance(question, Mapping):
                raise _fail(source, qwhere, "must be a mapping")
            qid = question.get("id")
            if qid in (None, ""):
                raise _fail(source, f"{qwhere}.id", "required")
            if str(qid) in seen:
                raise _fail(source, f"{qwhere}.id", f"duplicate question id {qid!r}")
            seen.add(str(qid))
            if not isinstance(question.get("question_text"), str):
                raise _fail(source, f"{qwhere}.question_text", "required string")
            answer = question.get("reference_answer")
            if answer is not None and not isinstance(answer, str):
                raise _fail(source, f"{qwhere}.reference_answer", "must be a string")
            groups = question.get("reference_steps")
            if groups is None:
                continue
            if not isinstance(groups, list):
                raise _fail(source, f"{qwhere}.reference_steps", "must be a list of step groups")
            for g, group in enumerate(groups):
                if not isinstance(group, list):
                    raise _fail(source, f"{qwhere}.reference_steps[{g}]", "must be a list of steps")
                for s, step in enumerate(group):
                    _check_step(step, source, f"{qwhere}.reference_steps[{g}][{s}]", True)


def _check_response(response: Any, source: str, where: str) -> None:
    if not isinstance(response, Mapping):
        raise _fail(source, where, "must be a mapping")
    for key in ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec"):
        value = response.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise _fail(source, f"{where}.{key}", "must be a number")
    answer = response.get("actual_answer")
    if answer is not None and not isinstance(answer, str):
        raise _fail(source, f"{where}.actual_answer", "must be a string")
    steps = response.get("actual_steps")
    if steps is None:
        return
    if not isinstance(steps, list):
        raise _fail(source, f"{where}.actual_steps", "must be a list")
    for i, step in enumerate(steps):
        _check_step(step, source, f"{where}.actual_steps[{i}]", False)


def validate_responses(data: Any, source: str = "responses") -> None:
    """Raise `InputError` unless `data` is a list of responses or a dict by question id."""
    if isinstance(data, Mapping):
        for qid, response in data.items():
            _check_response(response, source, f"[{qid!r}]")
        return
    if not isinstance(data, list):
        problem = "must be a list of responses or a mapping by question id"
        raise _fail(source, "(top level)", problem)
    seen: set[str] = set()
    for i, response in enumerate(data):
        _check_response(response, source, f"[{i}]")
        qid = response.get("question_id")
        if qid in (None, ""):
            raise _fail(source, f"[{i}].question_id", "required")
        if str(qid) in seen:
            raise _fail(source, f"[{i}].question_id", f"duplicate question id {qid!r}")
        seen.add(str(qid))


def responses_by_id(data: Mapping[str, Any] | list[Any]) -> dict[str, Mapping[str, Any]]:
    """Responses keyed by question id (a dict's keys win over `question_id` fields)."""
    if isinstance(data, Mapping):
        return {str(k): v for k, v in data.items()}
    return {str(r["question_id"]): r for r in data}

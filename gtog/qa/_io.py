"""Reading, validating and writing QA evaluation data (YAML or JSON)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

import yaml

from gtog._errors import InputError, describe_exception

__all__ = [
    "MEDIA_TYPES",
    "InputError",
    "dump_data",
    "input_problems",
    "load_data",
    "question_problem",
    "response_problem",
    "responses_by_id",
    "validate_reference",
    "validate_responses",
]

# Media types with their own comparison; any other compares as text.
MEDIA_TYPES = ("application/sparql-results+json", "application/json")


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
        first = describe_exception(exc, with_type=False)
        kind = "JSON" if p.suffix.lower() == ".json" else "YAML"
        raise InputError(f"{p}: not valid {kind}: {first}") from exc


def _json_default(value: Any) -> Any:
    """YAML timestamps (e.g. a step's `execution_timestamp`) as ISO 8601 text."""
    if isinstance(value, datetime | date):
        return value.isoformat()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def dump_data(path: str | Path, data: Any) -> None:
    """Write `data` as JSON (`.json`) or YAML, atomically (a temp file then rename)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    if p.suffix.lower() == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False, default=_json_default) + "\n"
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


_NUMBERS = (int, float)


def _is_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, _NUMBERS)


def _is_mapping(value: Any) -> bool:
    """`isinstance(value, Mapping)`, fast for the usual dict (ABC checks are slow)."""
    return type(value) is dict or isinstance(value, Mapping)


def _fail(source: str, field: str, problem: str) -> InputError:
    return InputError(f"{source}: {field}: {problem}")


def _step_problem(step: Any, source: str, where: str, i: int, reference: bool) -> str | None:
    """The problem of step `where[i]`, or None (the path is formatted only for a problem)."""
    if not _is_mapping(step):
        return f"{source}: {where}[{i}]: must be a mapping"
    name = step.get("name")
    if not name or not isinstance(name, str):
        return f"{source}: {where}[{i}].name: required string"
    args = step.get("args")
    if args is not None and not _is_mapping(args):
        return f"{source}: {where}[{i}].args: must be a mapping"
    if reference:
        columns = step.get("required_columns")
        if columns is not None and (
            not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
        ):
            return f"{source}: {where}[{i}].required_columns: must be a list of strings"
        for flag in ("ordered", "ignore_duplicates"):
            if flag in step and not isinstance(step[flag], bool):
                return f"{source}: {where}[{i}].{flag}: must be true or false"
    return None


def _steps_problem(steps: Any, source: str, where: str, reference: bool) -> str | None:
    """The first problem of a list of steps, or None."""
    if not isinstance(steps, list):
        return f"{source}: {where}: must be a list"
    for i, step in enumerate(steps):
        problem = _step_problem(step, source, where, i, reference)
        if problem:
            return problem
    return None


def question_problem(question: Mapping[str, Any], source: str, where: str) -> str | None:
    """Why one reference question cannot be evaluated (file and field), or None.

    Steps need only a `name`: `output`, `output_media_type` (any; unknown types compare
    as text) and the SPARQL flags are optional.
    """
    if not isinstance(question.get("question_text"), str):
        return f"{source}: {where}.question_text: required string"
    answer = question.get("reference_answer")
    if answer is not None and not isinstance(answer, str):
        return f"{source}: {where}.reference_answer: must be a string"
    groups = question.get("reference_steps")
    if groups is None:
        return None
    if not isinstance(groups, list):
        return f"{source}: {where}.reference_steps: must be a list of step groups"
    for g, group in enumerate(groups):
        if not isinstance(group, list):
            return f"{source}: {where}.reference_steps[{g}]: must be a list of steps"
        problem = _steps_problem(group, source, f"{where}.reference_steps[{g}]", True)
        if problem:
            return problem
    return None


def response_problem(response: Any, source: str, where: str) -> str | None:
    """Why one response cannot be evaluated (file and field), or None.

    Any step `status` is accepted; only "success" steps (the default) are matched.
    """
    if not _is_mapping(response):
        return f"{source}: {where}: must be a mapping"
    for key in ("input_tokens", "output_tokens", "total_tokens", "elapsed_sec"):
        value = response.get(key)
        if value is not None and type(value) not in _NUMBERS and not _is_number(value):
            return f"{source}: {where}.{key}: must be a number"
    answer = response.get("actual_answer")
    if answer is not None and not isinstance(answer, str):
        return f"{source}: {where}.actual_answer: must be a string"
    steps = response.get("actual_steps")
    return None if steps is None else _steps_problem(steps, source, f"{where}.actual_steps", False)


def validate_reference(data: Any, source: str = "reference") -> None:
    """Raise `InputError` unless `data` is a list of templates, each with a
    `template_id` and a list of question mappings with unique `id`s.

    Problems inside one question are that question's error (`question_problem`).
    """
    if not isinstance(data, list):
        raise _fail(source, "(top level)", "must be a list of templates")
    seen: set[str] = set()
    for t, template in enumerate(data):
        where = f"[{t}]"
        if not _is_mapping(template):
            raise _fail(source, where, "must be a mapping")
        if template.get("template_id") in (None, ""):
            raise _fail(source, f"{where}.template_id", "required")
        questions = template.get("questions")
        if not isinstance(questions, list):
            raise _fail(source, f"{where}.questions", "must be a list")
        for q, question in enumerate(questions):
            qwhere = f"{where}.questions[{q}]"
            if not _is_mapping(question):
                raise _fail(source, qwhere, "must be a mapping")
            qid = question.get("id")
            if qid in (None, ""):
                raise _fail(source, f"{qwhere}.id", "required")
            if str(qid) in seen:
                raise _fail(source, f"{qwhere}.id", f"duplicate question id {qid!r}")
            seen.add(str(qid))


def validate_responses(data: Any, source: str = "responses") -> None:
    """Raise `InputError` unless `data` is a mapping by question id, or a list of
    mappings with unique `question_id`s.

    Problems inside one response are that question's error (`response_problem`).
    """
    if _is_mapping(data):
        return
    if not isinstance(data, list):
        problem = "must be a list of responses or a mapping by question id"
        raise _fail(source, "(top level)", problem)
    seen: set[str] = set()
    for i, response in enumerate(data):
        if not _is_mapping(response):
            raise _fail(source, f"[{i}]", "must be a mapping")
        qid = response.get("question_id")
        if qid in (None, ""):
            raise _fail(source, f"[{i}].question_id", "required")
        if str(qid) in seen:
            raise _fail(source, f"[{i}].question_id", f"duplicate question id {qid!r}")
        seen.add(str(qid))


def input_problems(
    reference: list[Any],
    responses: Mapping[str, Any] | list[Any],
    sources: tuple[str, str] = ("reference", "responses"),
) -> dict[str, str]:
    """The problem of each question (by id) that cannot be evaluated as given."""
    problems: dict[str, str] = {}
    for t, template in enumerate(reference):
        for q, question in enumerate(template["questions"]):
            problem = question_problem(question, sources[0], f"[{t}].questions[{q}]")
            if problem:
                problems[str(question["id"])] = problem
    items = (
        [(f"[{k!r}]", str(k), r) for k, r in responses.items()]
        if _is_mapping(responses)
        else [(f"[{i}]", str(r["question_id"]), r) for i, r in enumerate(responses)]
    )
    for where, qid, response in items:
        problem = response_problem(response, sources[1], where)
        if problem and qid not in problems:
            problems[qid] = problem
    return problems


def responses_by_id(data: Mapping[str, Any] | list[Any]) -> dict[str, Mapping[str, Any]]:
    """Responses keyed by question id (a dict's keys win over `question_id` fields)."""
    if _is_mapping(data):
        return {str(k): v for k, v in data.items()}
    return {str(r["question_id"]): r for r in data}

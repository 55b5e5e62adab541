"""The one structured-reply helper: `ask_json`, and `parse_json_reply` under it.

It asks for JSON (the provider's structured output where LiteLLM knows it supports a
schema, else JSON mode), reads the reply strictly against a pydantic schema, asks once
more if that fails, and returns an explicit error instead of a value when it still fails.
JSON repair may fix syntax but never supplies a value that the reply does not state; a
reply cut at max_tokens, filtered, or stating two different replies is no reply, and so is
one that states a verdict field (a number or boolean) with two different values in any form:
`score: 1` then `score: 0`, a JSON object repeating a key, or JSON then prose.
"""

from __future__ import annotations

import json
import re
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, Union, get_args, get_origin

import json_repair
from pydantic import BaseModel, ValidationError

from gtog.llm._cache import draw, reading
from gtog.llm._usage import CUT_REASONS, ChatReply

if TYPE_CHECKING:
    from gtog.llm._models import ChatModel, Messages

__all__ = ["JsonReply", "ask_json", "exact_choice", "optional_text", "parse_json_reply"]

T = TypeVar("T", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_KEY_VALUE = re.compile(r"^\W*?([A-Za-z_]\w*)\W*?\s*[:=]\s*(.+?)\s*$", re.M)
_MARKS = "[\"'*_`]*"  # quotes and markdown emphasis around a key or a value
_GAP = "[\\s\"'*_`]*"  # the same, and spaces, between a key and its value
_SCALAR = r"-?\d+(?:\.\d+)?|true|false|yes|no"
_END = r"\s*(?=[,}\]\n\r.;)!*]|$)"  # a delimiter after the value: `1.` or `1,`, not `1 or 0`


@dataclass(frozen=True)
class JsonReply(Generic[T]):
    """A structured reply: `value` when the model stated one that validates, else `error`."""

    value: T | None
    error: str | None
    replies: tuple[ChatReply, ...] = ()
    text: str | None = None
    """The last raw reply (for logs and reasons)."""


def exact_choice(value: Any, allowed: tuple[int, ...], name: str) -> Any:
    """A reply's number as written ("1", 1.0 -> 1) when it is one of `allowed`, for a
    pydantic `mode="before"` validator; a boolean is refused (true is not 1)."""
    if isinstance(value, bool):
        choices = ", ".join(map(str, allowed))
        raise ValueError(f"{name} must be one of {choices}, not a boolean")
    if isinstance(value, str) and value.strip() in {str(a) for a in allowed}:
        return int(value.strip())
    if isinstance(value, float) and value in allowed:
        return int(value)
    return value


def optional_text(value: Any) -> str | None:
    """A reply's free-text field as text (a number or list the model wrote, stringified)."""
    return None if value is None else str(value)


def _json_candidates(text: str) -> Iterator[str]:
    yield from _FENCE.findall(text)
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if start != -1:
            yield text[start : end + 1] if end > start else text[start:]


def _loads(text: str) -> tuple[Any, bool] | None:
    """(value, repaired) of the first JSON object or list in `text`, else None."""
    for candidate in _json_candidates(text):
        try:
            value = json.loads(candidate)
            repaired = False
        except json.JSONDecodeError:
            try:
                value = json_repair.loads(candidate)
            except Exception:  # json_repair raises on some pathological input
                continue
            repaired = True
        if isinstance(value, dict | list) and value:
            return value, repaired
    pairs = {k.lower(): v for k, v in _KEY_VALUE.findall(text)}
    if pairs:  # `score: 1` written as text: every value is checked against the reply below
        return {k: _scalar(v) for k, v in pairs.items()}, True
    return None


def _scalar(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _leaves(value: Any, key: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v, key)
    else:
        yield key, value


def _stated(text: str, key: str, value: Any) -> bool:
    """Does `text` state `key: value` itself (followed by a delimiter, not `or 1`)?"""
    if isinstance(value, bool):
        literal = "true|yes" if value else "false|no"
    elif isinstance(value, int | float):
        literal = "|".join(re.escape(s) for s in {str(value), f"{value:g}", json.dumps(value)})
    else:
        return True
    quote = "[\"']?"
    pattern = rf"{quote}{re.escape(key)}{quote}\s*[:=]\s*{quote}(?:{literal}){quote}\s*"
    return re.search(pattern + r"(?=[,}\]\n\r.;]|$)", text, re.I) is not None


def _top_level_values(
    text: str, hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> list[Any]:
    """Every well-formed JSON object or list written at the top level of `text` (objects
    built by `hook` when given)."""
    decoder = json.JSONDecoder(object_pairs_hook=hook)
    values, i = [], 0
    while True:
        starts = [j for j in (text.find("{", i), text.find("[", i)) if j != -1]
        if not starts:
            return values
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        if isinstance(value, dict | list) and value:
            values.append(value)
        i = max(end, start + 1)


def _several(text: str, schema: type[T]) -> int:
    """How many different replies valid under `schema` the text states in full."""
    distinct = []
    for value in _top_level_values(text):
        try:
            dumped = schema.model_validate(value).model_dump()
        except ValidationError:
            continue
        if dumped not in distinct:
            distinct.append(dumped)
    return len(distinct)


def _leaf_types(annotation: Any) -> set[Any]:
    """The types an annotation admits, through unions and literals (`Literal[0, 1]`: int)."""
    origin = get_origin(annotation)
    if origin is Literal:
        return {type(a) for a in get_args(annotation)}
    if origin is Union or origin is types.UnionType:
        return set().union(*(_leaf_types(a) for a in get_args(annotation)))
    return {origin or annotation}


def _verdict_fields(schema: type[BaseModel]) -> list[str]:
    """The schema's top-level fields that hold one number or boolean: its verdicts."""
    fields = []
    for name, field in schema.model_fields.items():
        leaves = _leaf_types(field.annotation)
        if leaves <= {int, float, bool, str, type(None)} and leaves & {int, float, bool}:
            fields.append(name)
    return fields


def _is_verdict(value: Any) -> bool:
    """A number or boolean, or text that is one ("1", "true")."""
    if isinstance(value, str):
        return re.fullmatch(_SCALAR, value.strip(), re.I) is not None
    return isinstance(value, int | float)


def _value(token: str) -> float | bool:
    low = token.lower()
    return low in ("true", "yes") if low in ("true", "yes", "false", "no") else float(token)


def _repeated_key(text: str) -> str | None:
    """Why a JSON object in `text` (at any depth) gives a key two different verdicts."""
    found: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in items:
            earlier = seen.setdefault(key, value)
            verdicts = _is_verdict(earlier) and _is_verdict(value)
            if verdicts and not found and _value(str(earlier)) != _value(str(value)):
                found.append(f"{key}: {json.dumps(earlier)}, {key}: {json.dumps(value)}")
        return seen

    _top_level_values(text, pairs)
    return f"2 different verdicts ({found[0]})" if found else None


def _conflict(text: str, schema: type[BaseModel]) -> str | None:
    """Why `text` states two different verdicts, or None.

    Every `key: value` statement of a verdict field counts, wherever it is written (JSON,
    a repeated JSON key, prose, markdown `**Score:** 1`): two different values are two
    verdicts. A value followed by more words (`0 or 1`) is no statement.
    """
    for name in _verdict_fields(schema):
        key = rf"(?<!\w){_MARKS}{re.escape(name)}{_GAP}[:=]{_GAP}"
        pattern = rf"{key}({_SCALAR}){_MARKS}"
        stated: dict[float | bool, str] = {}
        for token in re.findall(pattern + _END, text, re.I):
            stated.setdefault(_value(token), token)
        if len(stated) > 1:
            values = ", ".join(f"{name}: {t}" for t in stated.values())
            return f"{len(stated)} different verdicts ({values})"
    return _repeated_key(text)


def parse_json_reply(text: str, schema: type[T]) -> tuple[T | None, str | None]:
    """`(value, None)` when `text` states a reply valid under `schema`, else `(None, why)`.

    Code fences and prose around the JSON are ignored; broken syntax is repaired, but a
    repaired reply counts only if every number and boolean in it is written in the reply
    as `key: value` (an echoed `{"score": 0 or 1}` is not a score of 0). A reply stating
    two different valid replies, or a verdict field with two different values in any form
    (two verdicts), is no reply: which one would be arbitrary. The same verdict restated
    is one verdict.
    """
    several = _several(text or "", schema)
    if several > 1:
        return None, f"{several} different replies in one: {(text or '')[:120]!r}"
    conflict = _conflict(text or "", schema)
    if conflict is not None:
        return None, f"{conflict} in one reply: {(text or '')[:120]!r}"
    loaded = _loads(text or "")
    if loaded is None:
        return None, f"no JSON in reply: {(text or '')[:120]!r}"
    data, repaired = loaded
    try:
        value = schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return None, f"{where}: {first['msg']} in reply {(text or '')[:120]!r}"
    if repaired:
        for key, leaf in _leaves(data):
            if key and not _stated(text, key, leaf):
                return None, f"{key}: no explicit value in reply {(text or '')[:120]!r}"
    return value, None


async def ask_json(
    model: ChatModel,
    messages: Messages,
    schema: type[T],
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    structured: bool = True,
    attempts: int = 2,
    category: str | None = None,
) -> JsonReply[T]:
    """Ask for a reply in `schema`; one more attempt if it cannot be read, then an error.

    A reply cut at max_tokens or stopped by a content filter is not read at all (a cut
    verdict may be another verdict's first half). Transport errors are raised (the caller
    decides whether they are fatal); an unreadable or invalid reply is returned as
    `JsonReply(value=None, error=...)`, never as a default. A reply it cannot use is
    neither stored in the model-call cache nor replayed from it (`gtog.llm._cache.reading`).
    """
    replies: list[ChatReply] = []
    error = "no attempt"
    text: str | None = None

    def check(reply: str) -> str | None:  # an unreadable reply is never cached nor replayed
        return parse_json_reply(reply, schema)[1]

    for attempt in range(1, max(1, attempts) + 1):
        with draw("attempt", attempt), reading(check):  # asking again: a new sample
            reply = await model.chat(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                json_mode=structured,
                schema=schema if structured else None,
                category=category,
            )
        replies.append(reply)
        text = reply.text
        if reply.cut is not None:  # an incomplete reply is no reply, whatever it parses to
            error = f"reply {CUT_REASONS[reply.cut]} (finish_reason: {reply.cut})"
            continue
        value, why = parse_json_reply(reply.text, schema)
        if value is not None:
            return JsonReply(value, None, tuple(replies), text)
        error = why or "invalid reply"
    return JsonReply(None, f"unusable reply: {error}", tuple(replies), text)

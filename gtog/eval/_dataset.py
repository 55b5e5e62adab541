"""QA datasets as they lie on disk, normalised to `QAItem`.

A dataset is a file or a folder searched recursively for `.json`/`.jsonl` files, each a
list of question objects: `{question, answer}` or `{question, ground_truth, context}`
(`context` is gold evidence; `id`/`qid`, `imdb_key`/`index_key` and `assertions`, the claims
a right answer must make, optional). Other benchmarks' shapes read as they are: several gold
answers (`answer`/`ground_truth` a list, SQuAD's `answers: {text: [...]}`), HotpotQA
(`_id`, `context` as [title, sentences] pairs or Hugging Face's `{title, sentences}`: the
`supporting_facts` sentences are the evidence), GraphRAG-Bench (`source` names the
corpus: `dataset.index_field: source`, with `dataset.index_map` when the names are not the
index keys) and BenchmarkQED's AutoQ files
(`question_text` or a question's `text` with its `attributes.assertions`, no reference
answer: the metrics that need one skip it). A file's questions belong to the index key
found, in order, from: the item's `imdb_key`/`index_key` field (or `dataset.index_field`);
the file's folder name if it is a
configured key; the file's stem if configured; the single configured key the stem contains
(`qa_tt0443706` -> `tt0443706`); the only configured key (when the dataset holds one QA
file). In a searched folder, a file none of these keys is skipped with a warning (unless no
file at all is keyed); elsewhere it is an error. `files` maps keys to files explicitly. A
repeated question (same key and text) is kept with its own stable id: the hash id, then
`-2`, `-3`, ... in file order.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gtog._errors import InputError

__all__ = ["Dataset", "QAItem", "dataset_fingerprint", "load_dataset", "question_id"]

KEY_FIELDS = ("imdb_key", "index_key")
ANSWER_FIELDS = ("answer", "ground_truth", "answers")
"""Where an item keeps its gold answer(s): a string, or a list of them (`answers` also as
SQuAD's `{text: [...]}`)."""
QUESTION_FIELDS = ("question", "question_text")
"""Where an item keeps its question (`question_text`: BenchmarkQED's assertion files); an
AutoQ question (`{id, text, attributes}`) keeps it in `text`."""
ID_FIELDS = ("id", "qid", "question_id", "_id")
SKIPPED_NAMES = frozenset(
    {"eval_results_detailed.json", "eval_results_summary.json", "eval_checkpoint.jsonl"}
)
"""gtog's own result files, never read as questions when a folder is searched."""


class QAItem(BaseModel):
    """One question of the dataset."""

    model_config = ConfigDict(frozen=True)

    qid: str
    index_key: str
    question: str
    reference: str
    evidence: str | None = None
    groups: dict[str, str] = Field(default_factory=dict)
    """Values of the item's `dataset.group_by` fields (a field it lacks is absent)."""
    assertions: tuple[str, ...] | None = None
    """Short claims a right answer must make (the `assertions` scorer); None: none given."""
    answers: tuple[str, ...] | None = None
    """Every gold answer when the item gives several (`reference` then shows them joined by
    ` | `); None: the one `reference` (or none at all: "")."""

    @property
    def gold(self) -> tuple[str, ...]:
        """The gold answers a reference metric takes the best match over (none: ())."""
        if self.answers:
            return self.answers
        return (self.reference,) if self.reference.strip() else ()

    @property
    def judged_reference(self) -> str:
        """The reference as a judge reads it: every gold answer, said to be alternatives."""
        if not self.answers:
            return self.reference
        listed = "; ".join(f'"{a}"' for a in self.answers)
        return f"any one of these {len(self.answers)} answers is right: {listed}"


@dataclass
class Dataset:
    """The loaded questions, what was read, and warnings for the caller to show."""

    items: list[QAItem]
    files: list[Path] = field(default_factory=list)
    repeated_questions: int = 0
    """Questions that repeat an earlier one (same index key and text), each kept."""
    warnings: list[str] = field(default_factory=list)

    @property
    def has_evidence(self) -> bool:
        """Whether any question carries gold evidence."""
        return any(i.evidence for i in self.items)


def question_id(index_key: str, question: str) -> str:
    """A stable id for a question without one: a hash of its index key and text."""
    digest = hashlib.sha256(f"{index_key}\x1f{question.strip()}".encode()).hexdigest()
    return f"{index_key}-{digest[:12]}"


def _parse(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read dataset ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}: malformed JSON ({exc.msg})") from None


def _as_list(data: Any) -> list[Any] | None:
    if isinstance(data, dict):
        # tolerate {"questions": [...]} / {"data": [...]} wrappers
        lists = [v for v in data.values() if isinstance(v, list)]
        if len(lists) == 1:
            data = lists[0]
    return data if isinstance(data, list) else None


def _read_list(path: Path) -> list[Any]:
    data = _as_list(_parse(path))
    if data is None:
        raise InputError(f"{path}: expected a JSON list of question objects")
    return data


def _given_id(raw: Any) -> Any:
    """The item's own id (`id`, `qid`, `question_id`, HotpotQA's `_id`), or None."""
    if not isinstance(raw, dict):
        return None
    return next((raw[f] for f in ID_FIELDS if raw.get(f) not in (None, "")), None)


def _item(i: int, raw: Any) -> str:
    """How an error names the `i`-th (0-based) item of a file: `item 2 (id 'lh-02')`,
    counted from 1 as an editor's reader would, with its id when it has one."""
    given = _given_id(raw)
    return f"item {i + 1}" + (f" (id {given!r})" if given is not None else "")


def _text(path: Path, i: int, item: dict[str, Any], key: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{path}: {_item(i, item)}: field {key!r} must be a non-empty string")
    return value


def _question_field(raw: dict[str, Any]) -> str | None:
    """The field holding the item's question (AutoQ's question: `text`), or None."""
    found = next((f for f in QUESTION_FIELDS if f in raw), None)
    if found is None and "text" in raw and "attributes" in raw:
        return "text"
    return found


def _gold(path: Path, i: int, raw: dict[str, Any]) -> tuple[str, ...]:
    """The item's gold answers: one string, a list of them, a list of `{text}` objects or
    SQuAD's `{text: [...]}`; () when it has none (then it must have assertions)."""
    name = next((f for f in ANSWER_FIELDS if f in raw), None)
    if name is None:
        return ()
    value = raw[name]
    if isinstance(value, dict) and "text" in value:
        value = value["text"]  # SQuAD as Hugging Face writes it
    values = value if isinstance(value, list) else [value]
    out: list[str] = []
    for n, entry in enumerate(values):
        if isinstance(entry, dict) and "text" in entry:
            entry = entry["text"]
        if not isinstance(entry, str) or not entry.strip():
            where = f"{name}[{n}]" if isinstance(value, list) else f"field {name!r}"
            raise InputError(
                f"{path}: {_item(i, raw)}: {where} must be a non-empty string (or a list of them)"
            )
        if entry not in out:
            out.append(entry)
    if not out:
        raise InputError(f"{path}: {_item(i, raw)}: field {name!r} is an empty list")
    return tuple(out)


def _pairs(value: Any) -> bool:
    """HotpotQA's context: a list of [title, [sentence, ...]] pairs."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(p, list | tuple)
            and len(p) == 2
            and isinstance(p[0], str)
            and isinstance(p[1], list)
            and all(isinstance(x, str) for x in p[1])
            for p in value
        )
    )


def _hotpot_evidence(item: dict[str, Any], context: list[Any]) -> str:
    """The supporting facts' sentences ([title, sentence index] pairs) of HotpotQA's
    context; every paragraph when the item names none."""
    paragraphs = {title: sentences for title, sentences in context}
    facts = _as_pairs(item.get("supporting_facts"), "sent_id")
    picked = []
    if isinstance(facts, list):
        for fact in facts:
            if isinstance(fact, list | tuple) and len(fact) == 2 and fact[0] in paragraphs:
                title, n = fact
                sentences = paragraphs[title]
                if isinstance(n, int) and 0 <= n < len(sentences):
                    picked.append(sentences[n].strip())
    if picked:
        return " ".join(picked)
    return "\n\n".join(f"{t}: {''.join(s)}" for t, s in context)


def _as_pairs(value: Any, second: str) -> Any:
    """Hugging Face's columns (`{title: [...], <second>: [...]}`) as the original's
    [title, value] pairs; anything else as it is."""
    if not isinstance(value, dict):
        return value
    titles, values = value.get("title"), value.get(second)
    if not isinstance(titles, list) or not isinstance(values, list) or len(titles) != len(values):
        return value
    return [[t, v] for t, v in zip(titles, values, strict=True)]


def _evidence(path: Path, i: int, item: dict[str, Any]) -> str | None:
    context = item.get("context", item.get("evidence"))
    if context is None:
        return None
    context = _as_pairs(context, "sentences")  # HotpotQA as Hugging Face writes it
    if _pairs(context):
        context = _hotpot_evidence(item, context)
    if isinstance(context, list) and all(isinstance(c, str) for c in context):
        context = "\n\n".join(context)
    if not isinstance(context, str):
        raise InputError(
            f"{path}: {_item(i, item)}: field 'context' must be a string or list of strings"
        )
    return context if context.strip() else None


ASSERTION_TEXT_FIELDS = ("statement", "assertion", "text")
"""Where an assertion object keeps its claim (BenchmarkQED writes `statement`)."""


def _assertions(path: Path, i: int, item: dict[str, Any]) -> tuple[str, ...] | None:
    """The item's `assertions`: strings, or objects with a `statement` (BenchmarkQED's; an
    AutoQ question keeps them in `attributes.assertions`)."""
    value = item.get("assertions")
    attributes = item.get("attributes")
    if value is None and isinstance(attributes, dict):
        value = attributes.get("assertions")
    if value is None:
        return None
    if not isinstance(value, list):
        raise InputError(f"{path}: {_item(i, item)}: field 'assertions' must be a list")
    claims: list[str] = []
    for n, entry in enumerate(value):
        if isinstance(entry, dict):
            entry = next((entry[f] for f in ASSERTION_TEXT_FIELDS if f in entry), None)
        if not isinstance(entry, str) or not entry.strip():
            raise InputError(
                f"{path}: {_item(i, item)}: assertions[{n}] must be a non-empty string (or an "
                "object with a 'statement')"
            )
        claims.append(entry.strip())
    return tuple(claims) or None


@dataclass(frozen=True)
class KeyRule:
    """Which item field names an item's index key, and how its values map to keys."""

    fields: tuple[str, ...] = KEY_FIELDS
    mapping: Mapping[str, str] = field(default_factory=dict)
    """Field value -> index key (`dataset.index_map`); a value not in it is the key itself."""


def _own_key(raw: Any, rule: KeyRule = KeyRule()) -> str | None:
    if not isinstance(raw, dict):
        return None
    value = next((raw[f] for f in rule.fields if raw.get(f) not in (None, "")), None)
    if value is None:
        return None
    return rule.mapping.get(str(value), str(value))


def _key_from_location(path: Path, keys: Sequence[str]) -> tuple[str | None, list[str]]:
    """The configured key a file's folder or name gives: (key, []) or (None, contained keys)."""
    folder, stem = path.parent.name, path.stem
    if folder in keys:
        return folder, []
    if stem in keys:
        return stem, []
    low = stem.casefold()
    inside = [k for k in keys if k.casefold() in low]
    # a key inside a longer contained key (tt1 in tt12) is not a separate match
    inside = [k for k in inside if not any(k != o and k.casefold() in o.casefold() for o in inside)]
    if len(inside) == 1:
        return inside[0], []
    return None, inside


def _tried(path: Path, keys: Sequence[str], inside: list[str]) -> str:
    contains = (
        f"the name contains several keys ({', '.join(inside)})"
        if inside
        else "the name contains none"
    )
    return (
        f"{path}: cannot tell which index its questions are for: no imdb_key/index_key field, "
        f"folder {path.parent.name!r} and name {path.stem!r} are not keys under 'indexes' "
        f"({', '.join(keys)}) and {contains} (add an imdb_key field, name the file or its "
        "folder after the key, or map it in dataset.files)"
    )


def _check_shapes(path: Path, data: list[Any]) -> list[dict[str, Any]]:
    for i, raw in enumerate(data):
        if not isinstance(raw, dict):
            raise InputError(
                f"{path}: {_item(i, raw)}: expected an object, got {type(raw).__name__}"
            )
        claims = raw.get("assertions") or (
            (raw.get("attributes") or {}).get("assertions")
            if isinstance(raw.get("attributes"), dict)
            else None
        )
        if _question_field(raw) is None or not (any(f in raw for f in ANSWER_FIELDS) or claims):
            raise InputError(
                f"{path}: {_item(i, raw)}: neither dataset shape fits: expected "
                "{question, answer} or {question, ground_truth, context} (an answer may be a "
                "list), or {question_text, assertions}; "
                f"got fields {sorted(raw)}"
            )
    return data


def _group_value(value: Any) -> str | None:
    """A group label from an item field (None: the field says nothing)."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _items(
    path: Path,
    data: list[dict[str, Any]],
    file_key: str | None,
    forced: bool,
    group_by: Sequence[str] = (),
    rule: KeyRule = KeyRule(),
    keys: Sequence[str] | None = None,
) -> list[tuple[QAItem, bool]]:
    """(item, has an explicit id) for each question of one (shape-checked) file; with
    `keys` (a `dataset.index_field` rule), an item's key must be one of them."""
    out: list[tuple[QAItem, bool]] = []
    for i, raw in enumerate(data):
        field_name = _question_field(raw)
        assert field_name is not None  # shape-checked
        question = _text(path, i, raw, field_name)
        gold = _gold(path, i, raw)
        own = _own_key(raw, rule)
        if own is not None and forced and own != file_key:
            raise InputError(
                f"{path}: {_item(i, raw)}: {rule.fields[0]} {own!r} differs from the key "
                f"{file_key!r} dataset.files maps this file to"
            )
        if own is not None and keys is not None and own not in keys:
            value = next(str(raw[f]) for f in rule.fields if raw.get(f) not in (None, ""))
            raise InputError(
                f"{path}: {_item(i, raw)}: {rule.fields[0]} {value!r} is not a key under "
                f"'indexes' ({', '.join(keys)}); map it to one in dataset.index_map"
            )
        index_key = own or file_key
        assert index_key is not None  # the caller resolved a key for keyless items
        given = _given_id(raw)
        explicit = given is not None
        item = QAItem(
            qid=str(given) if explicit else question_id(index_key, question),
            index_key=index_key,
            question=question,
            reference=" | ".join(gold),
            evidence=_evidence(path, i, raw),
            groups={f: v for f in group_by if (v := _group_value(raw.get(f))) is not None},
            assertions=_assertions(path, i, raw),
            answers=gold if len(gold) > 1 else None,
        )
        out.append((item, explicit))
    return out


def _search(folder: Path, exclude: Sequence[Path]) -> list[Path]:
    """.json/.jsonl files under a folder (hidden folders, `exclude`, gtog's results skipped)."""
    skip = {p.resolve() for p in exclude}
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and (here / d).resolve() not in skip
        )
        for name in sorted(filenames):
            p = here / name
            if p.suffix in (".json", ".jsonl") and name not in SKIPPED_NAMES:
                found.append(p)
    return found


def _holds_questions(data: list[Any] | None) -> bool:
    return bool(data) and any(
        isinstance(d, dict) and _question_field(d) is not None for d in data or []
    )


def load_dataset(
    path: Path | None,
    index_keys: Sequence[str],
    *,
    files: Mapping[str, Path] | None = None,
    exclude: Sequence[Path] = (),
    group_by: Sequence[str] = (),
    index_field: str | None = None,
    index_map: Mapping[str, str] | None = None,
) -> Dataset:
    """Load the questions of a dataset file or folder, and of `files` ({key: file}).

    `index_keys` are the configured keys (they give files their key); `exclude` are
    folders a search skips (the run's output); `group_by` names item fields each item
    keeps as its `groups`; `index_field` the item field naming its index (GraphRAG-Bench's
    `source`; default `imdb_key`/`index_key`), `index_map` its values' keys. Bad input
    raises a one-line `InputError`.
    """
    keys = list(index_keys)
    rule = KeyRule((index_field,) if index_field else KEY_FIELDS, dict(index_map or {}))
    strict = keys if index_field or index_map else None
    # (file, parsed list, key, key forced by dataset.files)
    sources: list[tuple[Path, list[Any], str | None, bool]] = []
    for key, file in (files or {}).items():
        if not file.is_file():
            raise InputError(f"{file}: dataset file for {key!r} (dataset.files) not found")
        sources.append((file, _check_shapes(file, _read_list(file)), key, True))
    mapped = {f.resolve() for f, *_ in sources}
    where = path if path is not None else sources[0][0] if sources else Path(".")
    found: list[tuple[Path, list[Any]]] = []
    searched = path is not None and path.is_dir()
    if path is not None and path.is_dir():
        candidates = [p for p in _search(path, exclude) if p.resolve() not in mapped]
        parsed = [(p, _as_list(_parse(p))) for p in candidates]
        found = [(p, d) for p, d in parsed if d is not None and _holds_questions(d)]
        if not found and not sources:
            raise InputError(
                f"{path}: no QA files in this folder or below ({len(candidates)} .json/.jsonl "
                "files searched, none a list of {question, ...} objects)"
            )
    elif path is not None and path.is_file():
        if path.resolve() not in mapped:
            found = [(path, _read_list(path))]
    elif path is not None:
        raise InputError(f"{path}: dataset not found")

    unkeyed: list[tuple[Path, list[str]]] = []
    for file, data in found:
        _check_shapes(file, data)
        key, inside = _key_from_location(file, keys)
        needs_key = any(_own_key(raw, rule) is None for raw in data)
        if key is None and needs_key:
            if len(found) == 1 and not sources and len(keys) == 1:
                key = keys[0]  # the only configured index
            elif inside or not searched:
                raise InputError(_tried(file, keys, inside))
            else:
                unkeyed.append((file, inside))
                continue
        sources.append((file, data, key, False))
    if unkeyed and not sources:
        raise InputError(_tried(unkeyed[0][0], keys, unkeyed[0][1]))

    loaded = [
        (file, i, item, explicit)
        for file, data, key, forced in sources
        for i, (item, explicit) in enumerate(
            _items(file, data, key, forced, group_by, rule, strict)
        )
    ]
    if not loaded:
        raise InputError(f"{where}: dataset has no questions")

    items: list[QAItem] = []
    seen: dict[str, tuple[Path, int]] = {}
    occurrences: dict[str, int] = {}
    repeats: list[str] = []
    for file, i, item, explicit in loaded:
        if item.qid in seen and not explicit:
            base = item.qid
            occurrences[base] = occurrences.get(base, 1) + 1
            item = item.model_copy(update={"qid": f"{base}-{occurrences[base]}"})
            first_file, first_i = seen[base]
            first = (
                f"item {first_i + 1}"
                if first_file == file
                else f"{_short(first_file, where)} item {first_i + 1}"
            )
            repeats.append(f"{_short(file, where)} item {i + 1} repeats {first} (id {item.qid})")
        if item.qid in seen:
            raise InputError(f"{file}: item {i + 1}: duplicate question id {item.qid!r}")
        seen[item.qid] = (file, i)
        items.append(item)
    warnings = []
    unreferenced = sum(1 for item in items if not item.gold)
    if unreferenced:
        warnings.append(
            f"{where}: {unreferenced} of {len(items)} questions have no reference answer (only "
            "assertions): the metrics that need one (correctness, token_recall, exact_match, "
            "...) skip them"
        )
    if repeats:
        s = "s" if len(repeats) > 1 else ""
        warnings.append(
            f"{where}: {len(repeats)} repeated question{s} kept as separate questions: "
            + "; ".join(repeats)
        )
    if unkeyed:
        names = ", ".join(_short(f, where) for f, _ in unkeyed)
        warnings.append(
            f"{where}: skipped {len(unkeyed)} QA file{'s' if len(unkeyed) > 1 else ''} whose "
            f"folder and name give no key under 'indexes': {names}"
        )
    return Dataset(
        items=items,
        files=[f for f, *_ in sources],
        repeated_questions=len(repeats),
        warnings=warnings,
    )


def _short(file: Path, base: Path) -> str:
    try:
        return str(file.relative_to(base)) if base.is_dir() else file.name
    except ValueError:
        return str(file)


def dataset_fingerprint(items: list[QAItem]) -> str:
    """A hash of the questions and references (detects a changed dataset on resume)."""
    h = hashlib.sha256()
    for item in sorted(items, key=lambda x: x.qid):
        # labels change no answer; a question without assertions (or one answer) hashes as
        # before they existed
        unset = [f for f in ("assertions", "answers") if not getattr(item, f)]
        data = item.model_dump(exclude={"groups", *unset})
        h.update(json.dumps(data, sort_keys=True).encode())
    return h.hexdigest()[:16]

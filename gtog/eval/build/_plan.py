"""Which index keys need building, where their documents are, and what they are made from.

A key is built when its project has a complete index: the final tables (entities,
relationships, communities, community_reports, text_units; graphrag 1.x names too) in its
output folder, and, when graphrag left an `output/stats.json`, a finished run in it (a run
that failed or was killed leaves `total_runtime` at 0). Every other key is built again;
graphrag's cache spares the calls a failed run made.

A key's documents are, in this order: `documents: {key: path}` (a file or a folder) in
eval_config.yaml; the project's own input folder when it already holds files; the one
`<key>.txt` (or `.md`) under the dataset's folder (`eval/<key>/<key>.txt` beside
`<key>.json`); the text files of a folder named after the key there.

The copies gtog makes in a project's input folder are recorded in its `COPIES` file (the
source and what was copied): while the key is not built, a copy whose source changed is
copied again (a file the user put there, or edited since, is kept). Every document of a key
to build is read at plan time: an empty one, or one that does not decode with the input's
encoding, is refused with the file named, before anything is written.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gtog._errors import InputError
from gtog._project import SETTINGS_FILES, settings_file

__all__ = [
    "COPIES",
    "FINAL_TABLES",
    "TEXT_SUFFIXES",
    "KeyPlan",
    "document_problem",
    "find_documents",
    "index_gap",
    "plan_keys",
    "raw_settings",
    "recorded_copies",
]

FINAL_TABLES = ("entities", "relationships", "communities", "community_reports", "text_units")
TEXT_SUFFIXES = (".txt", ".md")
"""Documents found by name (`<key>.txt`); a `documents:` entry may name any file."""
COPIES = ".gtog-copies.json"
"""In a project's folder: `{copy path: {"source": path, "sha256": of what was copied}}`."""
_PATTERNS = {
    "text": r".*\.txt$",
    "csv": r".*\.csv$",
    "json": r".*\.json$",
    "jsonl": r".*\.jsonl$",
    "parquet": r".*\.parquet$",
}
"""graphrag's default input file pattern per input type."""
_DECODED = ("text", "csv", "json", "jsonl")
"""Input types graphrag reads as text (with the input's encoding)."""


@dataclass
class KeyPlan:
    """One index key: its project, whether it needs building, and from what."""

    key: str
    project: Path
    gap: str | None
    """None: the index is complete; else what is missing (the key is built)."""
    documents: list[Path] = field(default_factory=list)
    """Files to copy into the project's input folder (empty: it has its own input)."""
    template: Path | None = None
    """The project to copy settings.yaml, prompts/ and .env from (a new project only)."""
    new: bool = False
    """No settings file yet: the project is created (from `template`, or `gtog init`)."""

    @property
    def settings_from(self) -> str:
        """Where the build's settings come from, for the plan."""
        if not self.new:
            return "the project's settings"
        return f"template {self.template}" if self.template else "gtog init defaults"


def raw_settings(folder: Path) -> dict[str, Any]:
    """A project's settings file as written (no `${ENV}` substitution; graphrag 2.x's in
    3.3's shape); {} when none."""
    from gtog._project import read_settings

    path = settings_file(folder)
    if path is None:
        return {}
    try:
        return read_settings(path).data
    except InputError as exc:
        raise InputError(f"{path}: not readable ({exc})") from None


def _folder(settings: dict[str, Any], section: str, default: str) -> str | None:
    """A file storage section's base_dir (None: not file storage)."""
    block = settings.get(section) or {}
    if not isinstance(block, dict):
        return default
    if str(block.get("type", "file")) != "file":
        return None
    return str(block.get("base_dir") or default)


def index_gap(project: Path) -> str | None:
    """None when `project` holds a complete index, else what is missing.

    A blob or Cosmos DB output is looked at in place (its table names and `stats.json`,
    through graphrag's storage classes; nothing created or written there); one that cannot
    be reached is an InputError naming it.
    """
    if settings_file(project) is None:
        return "no project" if not project.exists() else "no settings.yaml"
    settings = raw_settings(project)
    section = "output_storage" if "output_storage" in settings else "output"  # (2.x: output)
    base = _folder(settings, section, "output")
    if base is None:
        return _remote_gap(project)
    out = Path(base) if Path(base).is_absolute() else project / base
    stored = {p.stem for p in out.glob("*.parquet")} if out.is_dir() else set()
    stats: dict[str, Any] | None = None
    if (out / "stats.json").is_file():
        try:
            stats = json.loads((out / "stats.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            stats = {}
    return _gap(stored, stats, str(out), str(out / "stats.json"))


def _remote_gap(project: Path) -> str | None:
    from gtog._project import load_graphrag_config
    from gtog.compat._remote import (
        check_remote_output,
        remote_label,
        remote_stats,
        remote_tables,
    )

    config = load_graphrag_config(project)
    check_remote_output(config, project)
    where = remote_label(config.output_storage)
    stored = set(remote_tables(config, project))
    return _gap(stored, remote_stats(config), where, f"stats.json in {where}")


def _gap(stored: set[str], stats: dict[str, Any] | None, where: str, stats_at: str) -> str | None:
    """What the stored tables and graphrag's stats say is missing (None: a finished index)."""
    missing = [t for t in FINAL_TABLES if t not in stored and f"create_final_{t}" not in stored]
    if missing:
        return (
            f"no {', '.join(missing)} in {where}"
            if len(missing) < len(FINAL_TABLES)
            else "not indexed"
        )
    if stats is not None:
        try:
            finished = float(stats.get("total_runtime") or 0)
        except (TypeError, ValueError, AttributeError):
            finished = 0.0
        if finished <= 0:
            return f"the last build did not finish ({stats_at})"
    return None


def _input_folder(project: Path) -> Path | None:
    base = _folder(raw_settings(project), "input_storage", "input")
    if base is None:
        return None
    return Path(base) if Path(base).is_absolute() else project / base


def recorded_copies(project: Path) -> dict[str, dict[str, str]]:
    """The copies gtog made in `project`'s input folder ({} when none is recorded)."""
    try:
        data = json.loads((project / COPIES).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _input_format(settings: dict[str, Any]) -> tuple[str, str, str | None]:
    """The input's type, encoding and file pattern (graphrag 3.x names, or 2.x's)."""
    block = settings.get("input") or {}
    block = block if isinstance(block, dict) else {}
    kind = str(block.get("type") or block.get("file_type") or "text")
    encoding = str(block.get("encoding") or block.get("file_encoding") or "utf-8")
    pattern = block.get("file_pattern") or _PATTERNS.get(kind)
    return kind, encoding, str(pattern) if pattern else None


def document_problem(path: Path, kind: str = "text", encoding: str = "utf-8") -> str | None:
    """Why `path` cannot be indexed (empty, not readable, not `encoding` text), or None."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"{path}: not readable ({exc.strerror or exc})"
    if kind not in _DECODED:
        return None if data else f"{path}: empty document"
    try:
        codecs.lookup(encoding)
    except LookupError:
        return None  # graphrag will say so, naming its setting
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        return (
            f"{path}: not {encoding} text (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            f"save it as {encoding}, or set input.encoding in the project's settings"
        )
    if not text.strip():
        return f"{path}: empty document"
    return None


def _files(folder: Path) -> list[Path]:
    return sorted(
        p
        for p in folder.iterdir()
        if p.is_file() and not p.name.startswith(".") and p.suffix != ".json"
    )


def find_documents(
    key: str, project: Path, given: Path | None, dataset_dir: Path | None, skip: list[Path]
) -> list[Path]:
    """The documents to index for `key` ([] when the project's input folder has them);
    InputError when there are none, or several that could be meant."""
    if given is not None:
        if given.is_file():
            return [given]
        if given.is_dir() and _files(given):
            return _files(given)
        raise InputError(f"documents: {key}: {given} is not a file or a folder of documents")
    own = _input_folder(project) if settings_file(project) is not None else None
    if own is not None and own.is_dir() and any(own.iterdir()):
        # gtog's own copies: their sources (a changed one is copied again); else the user's
        sources = {Path(c.get("source", "")) for c in recorded_copies(project).values()}
        return sorted(p for p in sources if p.name and p.is_file())
    found: list[Path] = []
    folders: list[Path] = []
    ignored = {p.resolve() for p in skip}
    if dataset_dir is not None and dataset_dir.is_dir():
        for dirpath, dirnames, filenames in os.walk(dataset_dir):
            here = Path(dirpath)
            dirnames[:] = sorted(
                d for d in dirnames if not d.startswith(".") and (here / d).resolve() not in ignored
            )
            found += [
                here / f
                for f in sorted(filenames)
                if Path(f).stem == key and Path(f).suffix in TEXT_SUFFIXES
            ]
            folders += [here / d for d in dirnames if d == key]
    if len(found) > 1:
        raise InputError(
            f"{dataset_dir}: several documents for {key!r} ({', '.join(map(str, found))}); "
            f"name one in eval_config.yaml: documents: {{{key}: path}}"
        )
    if found:
        return found
    texts = [p for f in folders for p in _files(f) if p.suffix in TEXT_SUFFIXES]
    if texts:
        return texts
    where = dataset_dir if dataset_dir is not None else "the dataset"
    raise InputError(
        f"no documents for index {key!r}: no {key}.txt under {where}, no input files in "
        f"{project}; name them in eval_config.yaml: documents: {{{key}: path}}"
    )


def _document_problems(plan: KeyPlan) -> list[str]:
    """Each document of `plan` that cannot be indexed, as one message."""
    settings = raw_settings(plan.template if plan.new and plan.template else plan.project)
    kind, encoding, pattern = _input_format(settings)
    docs = plan.documents
    if not docs and not plan.new:
        own = _input_folder(plan.project)
        if own is not None and own.is_dir():
            docs = [
                p
                for p in sorted(own.rglob("*"))
                if p.is_file()
                and not p.name.startswith(".")
                and (pattern is None or re.search(pattern, p.relative_to(own).as_posix()))
            ]
    return [m for doc in docs if (m := document_problem(doc, kind, encoding)) is not None]


def plan_keys(
    root: Path,
    indexes: dict[str, str],
    keys: list[str],
    *,
    template: str | None,
    documents: dict[str, str],
    dataset_dir: Path | None,
    config_path: Path,
    skip: list[Path] | None = None,
) -> list[KeyPlan]:
    """Each key's plan; InputError (naming the config and key) for a missing template or
    a key without documents, before anything is built."""

    def under_root(value: str) -> Path:
        path = Path(value)
        return path if path.is_absolute() else root / path

    source = under_root(template) if template else None
    if source is not None and settings_file(source) is None:
        names = "/".join(SETTINGS_FILES)
        raise InputError(f"{config_path}: indexes_template: {source} has no {names}")
    unknown = [k for k in documents if k not in indexes]
    if unknown:
        raise InputError(f"{config_path}: documents: {unknown[0]!r} is not a key under indexes")
    plans = []
    problems: list[str] = []
    unusable: list[str] = []
    for key in keys:
        project = under_root(indexes[key]).resolve()
        gap = index_gap(project)
        plan = KeyPlan(key, project, gap, template=source, new=settings_file(project) is None)
        if gap is not None:
            given = under_root(documents[key]) if key in documents else None
            try:
                plan.documents = find_documents(key, project, given, dataset_dir, skip or [])
            except InputError as exc:
                problems.append(str(exc))
            else:
                unusable += _document_problems(plan)
        plans.append(plan)
    if problems:
        raise InputError(f"{config_path}: " + "; ".join(problems))
    if unusable:
        others = [m.split(": ", 1)[0] for m in unusable[1:]]
        more = f"; also {len(others)} more: {', '.join(others[:5])}" if others else ""
        raise InputError(f"{unusable[0]}{more}{', ...' if len(others) > 5 else ''}")
    return plans

"""Index one graphrag project: graphrag's pipeline, with a fast model check before it and a
count of the replies cut at max_tokens during it.

`index_project(root)` is what `gtog index` runs (and what builds a missing index before an
evaluation): the settings are read (with `overrides` applied in memory: the user's files
are never rewritten), the input folder and every model are checked in seconds (one line
naming the file or model and the fix, as `InputError`), then graphrag's own
`graphrag.api.build_index` runs with the caller's callbacks, and each LLM step's replies
cut at max_tokens are reported as the workflow that made them ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks

from gtog._errors import InputError
from gtog.indexing._finishes import LLM_STEPS, FinishTally, StepFinishes, count_finishes
from gtog.indexing._probe import PROBE_TIMEOUT_S, check_models
from gtog.llm._usage import CUT_REASONS

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = ["IndexOutcome", "cut_warning", "index_project", "load_index_config"]

logger = logging.getLogger(__name__.replace("._", "."))  # eval.log names the module as before

_PATTERNS = {"text": r".*\.txt$", "csv": r".*\.csv$", "json": r".*\.json$", "jsonl": r".*\.jsonl$"}
"""graphrag's default input file pattern per `input.type`."""


@dataclass
class IndexOutcome:
    """What one indexing run did."""

    root: Path
    workflows: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    """`workflow: error` for each workflow that failed."""
    steps: list[StepFinishes] = field(default_factory=list)
    """Replies per LLM step (extraction, summaries, ...), with those cut at max_tokens."""
    warnings: list[str] = field(default_factory=list)
    """One line per step whose replies were cut (`cut_warning`)."""
    seconds: float = 0.0
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        """Every workflow ran without an error."""
        return not self.errors


def cut_warning(step: StepFinishes, config: GraphRagConfig) -> str | None:
    """`extraction: 7 of 8 replies were cut at max_tokens ...; fix: ...`, or None."""
    if not step.cut_total:
        return None
    why = ", ".join(f"{n} {CUT_REASONS[r]}" for r, n in step.cut.items() if r != "length")
    cut = step.cut.get("length", 0)
    head = f"{LLM_STEPS[step.step]}: {cut} of {step.replies} replies were cut at max_tokens"
    if why:
        head = f"{LLM_STEPS[step.step]}: {step.cut_total} of {step.replies} replies were cut "
        head += f"({why}{f', {cut} at max_tokens' if cut else ''})"
    model = config.completion_models.get(step.model_id)
    args = (model.call_args or {}) if model is not None else {}
    now = args.get("max_tokens") or args.get("max_completion_tokens")
    setting = f"call_args.max_tokens ({now})" if now else "call_args.max_tokens (not set)"
    return (
        f"{head} (finish_reason: length): what came after the cut is missing from the index; "
        f"fix: raise {setting} of completion model {step.model_id!r} in settings.yaml, or "
        f"lower chunking.size ({config.chunking.size}) so each reply has less to list"
    )


class _Warner(NoopWorkflowCallbacks):
    """A graphrag workflow callback: at each workflow's end, one warning per LLM step whose
    replies were cut since the last one (so the count shows while indexing goes on)."""

    def __init__(
        self, tally: FinishTally, config: GraphRagConfig, say: Callable[[str], None] | None
    ) -> None:
        self.tally, self.config, self.say = tally, config, say
        self.reported: dict[str, int] = {}
        self.lines: list[str] = []

    def flush(self) -> None:
        for step in self.tally.steps.values():
            if step.cut_total > self.reported.get(step.step, 0):
                self.reported[step.step] = step.cut_total
                line = cut_warning(step, self.config)
                if line is not None:
                    self.lines.append(line)
                    if self.say is not None:
                        self.say(line)

    def workflow_end(self, name: str, instance: object) -> None:
        """Warn about the replies cut during the workflow that just ended."""
        self.flush()


@contextlib.contextmanager
def _working_dir(path: Path) -> Iterator[None]:
    """graphrag resolves some settings (cache, vector store) against the working folder."""
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def load_index_config(root: Path, overrides: dict[str, Any] | None = None) -> GraphRagConfig:
    """The project's config with `overrides` (InputError naming the file if it is bad)."""
    from gtog._project import load_graphrag_config

    return load_graphrag_config(root, overrides)


def _check_input(config: GraphRagConfig, settings: Path) -> None:
    """A project with nothing to index is one line, before any model is asked."""
    storage = config.input_storage
    if str(getattr(storage.type, "value", storage.type)) != "file" or not storage.base_dir:
        return
    folder = Path(storage.base_dir)
    kind = str(getattr(config.input.type, "value", config.input.type))
    pattern = config.input.file_pattern or _PATTERNS.get(kind)
    if pattern is None:
        return
    found = folder.is_dir() and any(
        re.search(pattern, p.relative_to(folder).as_posix()) for p in folder.rglob("*")
    )
    if not found:
        raise InputError(
            f"{settings}: input_storage.base_dir {folder} holds no file matching {pattern} "
            f"(input.type: {kind}); fix: put the documents to index there"
        )


def _sync_vector_size(config: GraphRagConfig, dims: dict[str, int]) -> None:
    """As graphrag's own model check does: the vector size its embedding model returns."""
    size = dims.get(config.embed_text.embedding_model_id)
    if not size or size == config.vector_store.vector_size:
        return
    logger.warning("embedding model returns %d-d vectors: vector_size set to it", size)
    config.vector_store.vector_size = size
    for schema in config.vector_store.index_schema.values():
        schema.vector_size = size


def _check(config: GraphRagConfig, settings: Path, timeout: float) -> dict[str, int]:
    """`check_models`, its requests' log lines in the project's log folder (not on the
    terminal) and the keys masked in them and in the one line it may raise."""
    from gtog._logs import capture_logs
    from gtog._redact import Redactor, environment_secrets
    from gtog.llm._models import run_sync

    models = [*config.completion_models.values(), *config.embedding_models.values()]
    redactor = Redactor([*(m.api_key for m in models), *environment_secrets(os.environ)])
    reporting = config.reporting
    kind = str(getattr(reporting.type, "value", reporting.type))
    folder = Path(reporting.base_dir or "logs") if kind == "file" else None
    if folder is not None and not folder.is_absolute():
        folder = settings.parent / folder
    try:
        with capture_logs(folder / "model-check.log" if folder else None, redactor):
            return run_sync(check_models(config, settings, timeout=timeout))
    except InputError as exc:
        raise InputError(redactor(str(exc))) from None


def index_project(
    root: Path,
    *,
    overrides: dict[str, Any] | None = None,
    method: str = "standard",
    verbose: bool = False,
    cache: bool = True,
    dry_run: bool = False,
    skip_validation: bool = False,
    callbacks: list[Any] | None = None,
    probe_timeout: float = PROBE_TIMEOUT_S,
    on_warning: Callable[[str], None] | None = None,
) -> IndexOutcome:
    """Build the graphrag index of the project at `root` (graphrag's standard or fast
    pipeline), as `graphrag index` does, with the checks and counts above.

    Raises InputError (nothing run) for bad settings, an empty input folder, or a model
    that cannot answer (skipped with `skip_validation`, as graphrag's own check is).
    `on_warning` is told each cut-replies line as the workflow that made them ends.
    Changes the working folder to `root` while graphrag runs (it reads some paths so).
    """
    from gtog._project import settings_file
    from gtog.llm._models import run_sync

    root = Path(root).resolve()
    config = load_index_config(root, overrides)
    settings = settings_file(root) or root / "settings.yaml"
    _check_input(config, settings)
    if not cache:
        from graphrag_cache.cache_type import CacheType

        config.cache.type = CacheType.Noop
    outcome = IndexOutcome(root, dry_run=dry_run)
    if not skip_validation:
        _sync_vector_size(config, _check(config, settings, probe_timeout))
    if dry_run:
        logger.info("dry run: configuration valid, nothing indexed")
        return outcome
    from graphrag.api import build_index

    tally, stop = count_finishes(config)
    warner = _Warner(tally, config, on_warning)
    started = time.monotonic()
    try:
        with _working_dir(root):
            results = run_sync(
                build_index(
                    config=config,
                    method=method,
                    callbacks=[*(callbacks or []), warner],
                    verbose=verbose,
                )
            )
    finally:
        stop()
        outcome.seconds = time.monotonic() - started
        warner.flush()
        outcome.steps = list(tally.steps.values())
        outcome.warnings = list(warner.lines)
    outcome.workflows = [r.workflow for r in results or []]
    outcome.errors = [f"{r.workflow}: {r.error}" for r in results or [] if r.error is not None]
    return outcome

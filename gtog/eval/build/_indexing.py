"""Index one graphrag project with graphrag's own API, and measure what it will cost.

`index_project` is the one function here that builds an index: graphrag's `load_config`
with the overrides passed in (a `--local` run's model addresses, say), then
`graphrag.api.build_index` with graphrag's standard pipeline, cache and logs. It is the
seam where a shared "index one project" function (issue 32's `gtog index --local`) plugs in.
`measure` reads what the estimate needs from a loaded config: graphrag's own chunker and
tokenizer over the documents, the prompt sizes, the prices.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import describe_exception
from gtog.eval.build._estimate import Estimate, Shape, estimate

if TYPE_CHECKING:
    from graphrag.callbacks.workflow_callbacks import WorkflowCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = ["LOCAL_INDEXING", "IndexOutcome", "index_project", "measure"]

LOCAL_INDEXING: dict[str, Any] = {
    "concurrent_requests": 1,
    "chunking": {"size": 300, "overlap": 30},
    "extract_graph": {"max_gleanings": 0},
    "summarize_descriptions": {"max_length": 120},
    "community_reports": {"max_length": 300, "max_input_length": 3000},
}
"""Indexing settings that fit the local 1.5B model's 8,192-token window on 2 CPU cores (those
the bundled example indexes were built with, scripts/build_example_indexes.py)."""


@dataclass(frozen=True)
class IndexOutcome:
    """How one indexing run ended."""

    ok: bool
    seconds: float
    workflows: list[str]
    failed: str | None = None
    """The workflow that failed (`<startup>` before the pipeline, `<config>` for settings)."""
    error: str | None = None
    log: str | None = None
    """graphrag's log of the run (its reporting folder's indexing-engine.log)."""


def _log_of(config: GraphRagConfig) -> str | None:
    reporting = config.reporting
    if getattr(reporting, "type", "file") != "file" or not reporting.base_dir:
        return None
    return str(Path(reporting.base_dir) / "indexing-engine.log")


async def index_project(
    root: Path,
    overrides: dict[str, Any] | None = None,
    callbacks: Sequence[WorkflowCallbacks] = (),
) -> IndexOutcome:
    """Build the index of the project at `root` (graphrag's standard pipeline and cache).

    graphrag's `load_config` makes `root` the working directory, as `graphrag index` does,
    so the settings' relative paths (cache, prompts) resolve there: call it in a process of
    its own (`gtog.eval.build._worker`).
    """
    from graphrag.api import build_index

    from gtog._project import load_graphrag_config

    started = time.monotonic()
    try:
        config = load_graphrag_config(root, overrides)  # (a graphrag 2.x file translated)
        os.chdir(root)
    except Exception as exc:
        return IndexOutcome(False, 0.0, [], "<config>", describe_exception(exc, with_type=False))
    try:
        results = await build_index(config=config, callbacks=list(callbacks))
    except Exception as exc:
        seconds = time.monotonic() - started
        return IndexOutcome(
            False, seconds, [], "<startup>", describe_exception(exc), _log_of(config)
        )
    seconds = time.monotonic() - started
    failed = next((r for r in results if r.error is not None), None)
    names = [r.workflow for r in results]
    if failed is not None:
        error = describe_exception(failed.error)  # type: ignore[arg-type]
        return IndexOutcome(False, seconds, names, failed.workflow, error, _log_of(config))
    return IndexOutcome(True, seconds, names, log=_log_of(config))


def _prompt_tokens(path: str | None, base: Path | None, default: str, encode: Any) -> int:
    text = default
    if path:
        p = Path(path)
        p = p if p.is_absolute() or base is None else base / p
        if p.is_file():
            text = p.read_text(encoding="utf-8")
    return len(encode(text))


def _per_token(config: GraphRagConfig, model_id: str, embedding: bool) -> tuple[float | None, ...]:
    from gtog.llm._usage import model_cost_usd

    if embedding:
        model = config.get_embedding_model_config(model_id)
        return (model_cost_usd(model, 1, 0),)
    model = config.get_completion_model_config(model_id)
    return model_cost_usd(model, 1, 0), model_cost_usd(model, 0, 1)


def measure(
    key: str, config: GraphRagConfig, settings_root: Path | None, documents: list[Path]
) -> Estimate:
    """The estimate for indexing `documents` with `config` (prompt files read relative to
    `settings_root`; graphrag's built-in prompts where none is set)."""
    import litellm  # noqa: F401  (its bundled tokenizer files let tiktoken work offline)
    from graphrag.prompts.index.community_report import COMMUNITY_REPORT_PROMPT
    from graphrag.prompts.index.extract_graph import GRAPH_EXTRACTION_PROMPT
    from graphrag.prompts.index.summarize_descriptions import SUMMARIZE_PROMPT
    from graphrag.tokenizer.get_tokenizer import get_tokenizer
    from graphrag_chunking.chunker_factory import create_chunker

    tokenizer = get_tokenizer(encoding_model=config.chunking.encoding_model)
    chunker = create_chunker(config.chunking, tokenizer.encode, tokenizer.decode)
    chunks: list[int] = []
    for doc in documents:
        text = doc.read_text(encoding="utf-8", errors="replace")
        chunks += [len(tokenizer.encode(c.text)) for c in chunker.chunk(text)]
    reports = config.community_reports
    shape = Shape(
        gleanings=config.extract_graph.max_gleanings,
        extract_prompt=_prompt_tokens(
            config.extract_graph.prompt, settings_root, GRAPH_EXTRACTION_PROMPT, tokenizer.encode
        ),
        summarize_prompt=_prompt_tokens(
            config.summarize_descriptions.prompt, settings_root, SUMMARIZE_PROMPT, tokenizer.encode
        ),
        report_prompt=_prompt_tokens(
            reports.graph_prompt, settings_root, COMMUNITY_REPORT_PROMPT, tokenizer.encode
        ),
        summary_max_length=config.summarize_descriptions.max_length,
        report_max_length=reports.max_length,
        report_max_input=reports.max_input_length,
    )
    chat_in, chat_out = _per_token(config, config.extract_graph.completion_model_id, False)
    (embed,) = _per_token(config, config.embed_text.embedding_model_id, True)
    return estimate(key, len(documents), chunks, shape, (chat_in, chat_out, embed))

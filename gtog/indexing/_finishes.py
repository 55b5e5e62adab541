"""How many of indexing's model replies were cut at max_tokens, per indexing step.

graphrag's workflows call their models through graphrag_llm, whose metrics middleware
hands every reply to a *metrics processor* (graphrag_llm's public hook). `count_finishes`
gives each LLM step of the index (extraction, summaries, community reports, claims) its own
copy of its completion model, in memory, whose processor counts the replies and their
`finish_reason`s into a `FinishTally`; nothing else about the calls changes (the reply
metrics graphrag_llm keeps are kept). Replies served from graphrag's cache are not replies
of this run and are not counted.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphrag_llm.config import MetricsConfig
from graphrag_llm.config.types import MetricsProcessorType
from graphrag_llm.metrics import register_metrics_processor
from graphrag_llm.metrics.default_metrics_processor import DefaultMetricsProcessor

from gtog.llm._usage import CUT_REASONS

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = ["LLM_STEPS", "FinishTally", "StepFinishes", "count_finishes"]

PROCESSOR = "gtog_finish_reasons"
"""The metrics processor type `count_finishes` gives the steps' models."""

LLM_STEPS: dict[str, str] = {
    "extract_graph": "extraction",
    "summarize_descriptions": "description summaries",
    "community_reports": "community reports",
    "extract_claims": "claim extraction",
}
"""Config section of an indexing step that calls a completion model -> what its replies are."""


@dataclass
class StepFinishes:
    """One step's replies: how many, and how many were cut (finish reason -> count)."""

    step: str
    model_id: str
    """The completion model id the step's settings name."""
    replies: int = 0
    cut: dict[str, int] = field(default_factory=dict)

    @property
    def cut_total(self) -> int:
        """Replies that are not the model's whole answer (`length`, `content_filter`)."""
        return sum(self.cut.values())


@dataclass
class FinishTally:
    """Replies per indexing step, counted while graphrag runs (from its worker threads)."""

    steps: dict[str, StepFinishes] = field(default_factory=dict)
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, step: str, finish_reason: str | None) -> None:
        """One reply of `step` that stopped for `finish_reason`."""
        with self._lock:
            entry = self.steps.get(step)
            if entry is None:
                return
            entry.replies += 1
            if finish_reason in CUT_REASONS:
                entry.cut[finish_reason] = entry.cut.get(finish_reason, 0) + 1


_TALLIES: dict[str, FinishTally] = {}
_TALLIES_LOCK = threading.Lock()


class _FinishCounter(DefaultMetricsProcessor):
    """graphrag_llm's default metrics, plus each reply's finish reason into a tally."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._tally_key = str(kwargs.get("gtog_tally") or "")
        self._step = str(kwargs.get("gtog_step") or "")

    def process_metrics(self, *, model_config: Any, metrics: Any, input_args: Any, response: Any):
        super().process_metrics(
            model_config=model_config, metrics=metrics, input_args=input_args, response=response
        )
        choices = getattr(response, "choices", None)
        if not choices:  # a stream or an embedding: no finish reason here
            return
        with _TALLIES_LOCK:
            tally = _TALLIES.get(self._tally_key)
        if tally is not None:
            reason = getattr(choices[0], "finish_reason", None)
            tally.count(self._step, str(reason) if reason is not None else None)


register_metrics_processor(PROCESSOR, _FinishCounter)


def count_finishes(config: GraphRagConfig) -> tuple[FinishTally, Callable[[], None]]:
    """Give each LLM step of `config` a counting copy of its completion model (in memory);
    return the tally and a function that stops counting into it.

    A step whose model already names its own metrics processor keeps it (not counted).
    """
    tally = FinishTally()
    for step in LLM_STEPS:
        section = getattr(config, step, None)
        model_id = getattr(section, "completion_model_id", None)
        if section is None or model_id not in config.completion_models:
            continue
        if step == "extract_claims" and not getattr(section, "enabled", False):
            continue
        model = config.completion_models[model_id]
        metrics = model.metrics.model_dump() if model.metrics is not None else {}
        if metrics.get("type", MetricsProcessorType.Default) != MetricsProcessorType.Default:
            continue
        metrics.update(type=PROCESSOR, gtog_tally=tally.key, gtog_step=step)
        copy_id = f"{model_id}@gtog:{step}"
        config.completion_models[copy_id] = model.model_copy(
            update={"metrics": MetricsConfig(**metrics)}
        )
        section.completion_model_id = copy_id
        tally.steps[step] = StepFinishes(step, model_id)
    with _TALLIES_LOCK:
        _TALLIES[tally.key] = tally

    def stop() -> None:
        with _TALLIES_LOCK:
            _TALLIES.pop(tally.key, None)

    return tally, stop

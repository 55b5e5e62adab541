"""The run's spec: what its answers and scores depend on, built from the prepared inputs."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gtog
from gtog.eval._dataset import QAItem, dataset_fingerprint
from gtog.eval.results._spec import AnalysisSpec, DatasetSpec, EvalSpec, JudgeSpec, stable_hash
from gtog.eval.run._config import EvalConfig
from gtog.eval.run._methods import RunMethod
from gtog.eval.run._state import EvalOptions

if TYPE_CHECKING:
    from gtog._project import Project
    from gtog.llm._models import ChatModel, EmbeddingModel

__all__ = ["build_spec", "index_hash", "method_settings"]


def method_settings(method: RunMethod, project: Project) -> dict[str, Any]:
    """What `method`'s answers on `project` depend on (for an answers file: its content;
    for an HTTP method: its url, body and paths, never its headers)."""
    if method.answers is not None:
        return method.answers.spec()
    if method.http is not None:
        return {"http": method.http.spec()}
    settings = method.entry.settings(project, method.options)
    if project.compat.adapted:  # an older graphrag's index, read in memory: say how
        settings = {**settings, "index_layout": project.compat.describe()}
    return {"method": method.base, **settings} if method.base != method.name else settings


def index_hash(project: Project) -> str:
    """A hash of the index's output tables (file storage), else of where they are."""
    out = project.config.output_storage
    if getattr(out, "type", "file") != "file":
        return stable_hash(out.model_dump(mode="json"))
    base = Path(out.base_dir or "output")
    base = base if base.is_absolute() else project.root / base
    h = hashlib.sha256()
    for table in sorted(base.glob("*.parquet")):
        h.update(table.name.encode() + b"\0")
        with table.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:16]


def _assertion_spec(prompt: str | None, threshold: float) -> str | None:
    """A hash of what changes an assertion verdict beside the judge (None: not scored)."""
    return None if prompt is None else stable_hash({"prompt": prompt, "threshold": threshold})


def build_spec(run_parts: dict[str, Any], options: EvalOptions, config: EvalConfig) -> EvalSpec:
    projects: dict[str, Project] = run_parts["projects"]
    methods: dict[str, RunMethod] = run_parts["methods"]
    judges: dict[str, ChatModel] = run_parts["judges"]
    panels: dict[str, dict[str, ChatModel] | None] = run_parts.get("panels") or {}
    embedders: dict[str, EmbeddingModel | None] = run_parts.get("embedders") or {}
    all_items: list[QAItem] = run_parts["all_items"]
    jc = config.judge

    def judge_name(key: str, judge: ChatModel) -> str:
        models = list((panels.get(key) or {}).values()) or [judge]
        return ", ".join(f"{m.name}@T{jc.temperature:g}" for m in models)

    return EvalSpec(
        gtog_version=gtog.__version__,
        graphrag_version=importlib.metadata.version("graphrag"),
        config_path=str(run_parts["config_path"]),
        dataset=DatasetSpec(
            path=str(run_parts["dataset_path"]),
            hash=dataset_fingerprint(all_items),
            questions=len(all_items),
            repeats=run_parts["repeats"],
        ),
        methods=list(methods),
        limit=options.limit,
        epochs=config.epochs,
        method_settings={
            name: {k: method_settings(m, p) for k, p in projects.items()}
            for name, m in methods.items()
        },
        indexes={k: index_hash(p) for k, p in projects.items()},
        analysis=AnalysisSpec(
            abstention_patterns=list(config.abstention.patterns),
            abstention_builtin=config.abstention.builtin,
            evidence_threshold=config.attribution.evidence_threshold,
            cluster_by=None
            if config.statistics.cluster_by == "none"
            else config.statistics.cluster_by,
            routers=list(config.routing.routers),
        ),
        judge=JudgeSpec(
            models={k: judge_name(k, j) for k, j in judges.items()},
            panel=list(jc.models or []),
            embedding_models={
                k: f"{e.config.model_provider}/{e.config.model}"
                for k, e in embedders.items()
                if e is not None
            },
            temperature=jc.temperature,
            max_tokens=jc.max_tokens,
            structured_output=jc.structured_output,
            trials=jc.trials,
            prompts=run_parts["prompts"].fingerprint,
            assertions=_assertion_spec(run_parts.get("assertion_prompt"), jc.assertion_threshold),
            metrics=[] if options.skip_judges else list(config.metrics),
            skipped=options.skip_judges,
            scales={m: list(s) for m, s in jc.scales.items()} or None,
            citations_max_checked=config.citations.max_checked
            if "citation_support" in config.metrics
            else None,
        ),
    )

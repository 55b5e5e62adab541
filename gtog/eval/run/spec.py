"""The run's spec: what its answers and scores depend on, built from the prepared inputs."""

from __future__ import annotations

import hashlib
import importlib.metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gtog
from gtog.eval.dataset import QAItem, dataset_fingerprint
from gtog.eval.results.spec import DatasetSpec, EvalSpec, JudgeSpec, stable_hash
from gtog.eval.run.config import DEFAULT_RESPONSE_TYPE, EvalConfig
from gtog.eval.run.state import EvalOptions
from gtog.search import method_entry

if TYPE_CHECKING:
    from gtog.llm import ChatModel
    from gtog.project import Project

__all__ = ["build_spec", "engine_options", "index_hash", "validate_method_settings"]


def engine_options(method: str, config: EvalConfig) -> dict[str, Any]:
    """What `build_engine` gets: the method's response type and the ToG overrides."""
    response_type = config.response_type_for(method)
    tog_search = dict(config.tog_search)
    if method == "tog" and response_type is not None:
        tog_search = {"response_type": response_type, **tog_search}
    return {"response_type": response_type or DEFAULT_RESPONSE_TYPE, "tog_search": tog_search}


def validate_method_settings(methods: list[str], config: EvalConfig, config_path: Path) -> None:
    """Each method's overrides in the config, checked by its registry entry."""
    for m in methods:
        entry = method_entry(m)
        if entry.block is not None and entry.block in EvalConfig.model_fields:
            entry.validate(getattr(config, entry.block), str(config_path))


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


def build_spec(run_parts: dict[str, Any], options: EvalOptions, config: EvalConfig) -> EvalSpec:
    projects: dict[str, Project] = run_parts["projects"]
    methods: list[str] = run_parts["methods"]
    judges: dict[str, ChatModel] = run_parts["judges"]
    all_items: list[QAItem] = run_parts["all_items"]
    jc = config.judge
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
        methods=methods,
        limit=options.limit,
        method_settings={
            m: {
                k: method_entry(m).settings(p, engine_options(m, config))
                for k, p in projects.items()
            }
            for m in methods
        },
        indexes={k: index_hash(p) for k, p in projects.items()},
        judge=JudgeSpec(
            models={k: f"{j.name}@T{jc.temperature:g}" for k, j in judges.items()},
            temperature=jc.temperature,
            max_tokens=jc.max_tokens,
            structured_output=jc.structured_output,
            trials=jc.trials,
            prompts=run_parts["prompts"].fingerprint,
            metrics=[] if options.skip_judges else list(config.metrics),
            skipped=options.skip_judges,
        ),
    )

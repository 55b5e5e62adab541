"""`gtog eval prepare`: plan (which keys, from what, at what price), then build.

`plan_preparation` reads eval_config.yaml, finds the keys whose project has no complete
index, their documents and settings, and estimates each key's indexing with its settings
(the project's, the template's, or `gtog init`'s defaults, with the run's overrides);
nothing is written. `run_preparation` then makes the projects and builds them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from gtog.eval.build._estimate import Estimate, total
from gtog.eval.build._indexing import LOCAL_INDEXING, measure
from gtog.eval.build._plan import KeyPlan, plan_keys, raw_settings
from gtog.eval.build._runner import BuildResult, EventHook, build_keys

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig

__all__ = ["Preparation", "PrepareOptions", "plan_preparation", "run_preparation"]


@dataclass
class PrepareOptions:
    """Where the study is, which keys, and how to build."""

    root: Path
    config_path: Path | None = None
    index_keys: list[str] | None = None
    concurrency: int | None = None
    """Keys built at once (default: the config's `concurrency`)."""
    model_overrides: Callable[[Path], dict[str, Any]] | None = None
    """graphrag config overrides per project root (`--local`: the local server's models)."""
    local: bool = False
    """Also apply `LOCAL_INDEXING` (settings that fit the local model)."""


@dataclass
class Preparation:
    """The plan: every key, those to build with their estimates, and the overrides."""

    options: PrepareOptions
    root: Path
    config_path: Path
    plans: list[KeyPlan]
    estimates: list[Estimate]
    concurrency: int
    secrets: list[str] = field(default_factory=list)

    @property
    def todo(self) -> list[KeyPlan]:
        """The keys to build (no complete index)."""
        return [p for p in self.plans if p.gap is not None]

    @property
    def total(self) -> Estimate:
        """The estimate of every key to build."""
        return total(self.estimates)

    def overrides(self, folder: Path) -> dict[str, Any] | None:
        """The overrides for the project (or template) at `folder`."""
        out: dict[str, Any] = {}
        if self.options.model_overrides is not None:
            out = self.options.model_overrides(folder)
        if self.options.local:
            for section, values in LOCAL_INDEXING.items():
                if isinstance(values, dict):
                    out[section] = {**(out.get(section) or {}), **values}
                else:
                    out[section] = values
        return out or None


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()] or None


def plan_preparation(options: PrepareOptions) -> Preparation:
    """The plan and estimates; InputError (one line naming the file and field) on bad input,
    before anything is written."""
    from gtog.eval.run._config import load_eval_config

    root = options.root.resolve()
    if not root.is_dir():
        raise InputError(f"{options.root}: --root folder not found")
    config_path = (options.config_path or root / "eval_config.yaml").resolve()
    config = load_eval_config(config_path)
    keys = _split(options.index_keys) or list(config.indexes)
    unknown = [k for k in keys if k not in config.indexes]
    if unknown:
        raise InputError(f"--index-key {unknown[0]}: not a key under indexes in {config_path}")
    dataset = Path(config.dataset.path) if config.dataset.path else None
    dataset = dataset if dataset is None or dataset.is_absolute() else root / dataset
    dataset_dir = dataset if dataset is None or dataset.is_dir() else dataset.parent
    output = Path(config.output.dir)
    plans = plan_keys(
        root,
        config.indexes,
        keys,
        template=config.indexes_template,
        documents=config.documents,
        dataset_dir=dataset_dir,
        config_path=config_path,
        skip=[output if output.is_absolute() else root / output],
    )
    prep = Preparation(
        options, root, config_path, plans, [], options.concurrency or config.concurrency
    )
    prep.estimates, prep.secrets = _estimates(prep)
    return prep


def _input_files(plan: KeyPlan) -> list[Path]:
    if plan.documents:
        return plan.documents
    block = raw_settings(plan.project).get("input_storage") or {}
    base = Path(str(block.get("base_dir") or "input")) if isinstance(block, dict) else Path("input")
    folder = base if base.is_absolute() else plan.project / base
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def _estimates(prep: Preparation) -> tuple[list[Estimate], list[str]]:
    """Each key's estimate with the settings it will be built with; the models' keys."""
    configs: dict[Path, tuple[GraphRagConfig, Path]] = {}
    scratch: Path | None = None
    out: list[Estimate] = []
    try:
        for plan in prep.todo:
            if not plan.new:
                source = plan.project
            elif plan.template is not None:
                source = plan.template
            else:
                if scratch is None:
                    scratch = Path(tempfile.mkdtemp(prefix="gtog-init-"))
                    from gtog.eval.build._projects import init_defaults

                    init_defaults(scratch)
                source = scratch
            if source not in configs:
                configs[source] = (load_graphrag_config(source, prep.overrides(source)), source)
            config, base = configs[source]
            out.append(measure(plan.key, config, base, _input_files(plan)))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    secrets = [
        m.api_key
        for config, _ in configs.values()
        for models in (config.completion_models, config.embedding_models)
        for m in models.values()
        if m.api_key
    ]
    return out, secrets


async def run_preparation(
    prep: Preparation, on_event: EventHook | None = None
) -> list[BuildResult]:
    """Make and build every key that needs it (`concurrency` at a time)."""
    return await build_keys(
        prep.todo, lambda plan: prep.overrides(plan.project), prep.concurrency, on_event
    )

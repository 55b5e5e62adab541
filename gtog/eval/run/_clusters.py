"""The dataset fields a run keeps for clustering (`statistics.cluster_by`), and their check."""

from __future__ import annotations

from pathlib import Path

from gtog._errors import InputError
from gtog.eval._dataset import QAItem
from gtog.eval.run._config import EvalConfig

__all__ = ["check_cluster_field", "fields_kept"]


def fields_kept(config: EvalConfig) -> list[str]:
    """Item fields each question keeps: `dataset.group_by`, and the `statistics.cluster_by`
    field when it names one (the summary clusters by it; results are not grouped by it)."""
    fields = list(config.dataset.group_by)
    cluster_by = config.statistics.cluster_by
    if cluster_by not in ("index_key", "none", *fields):
        fields.append(cluster_by)
    return fields


def check_cluster_field(
    config: EvalConfig, config_path: Path, dataset_path: Path, items: list[QAItem]
) -> None:
    """A `statistics.cluster_by` field no question has is a typo: InputError."""
    field = config.statistics.cluster_by
    if field in ("index_key", "none") or any(field in i.groups for i in items):
        return
    raise InputError(
        f"{config_path}: statistics.cluster_by: no question of {dataset_path} has the field "
        f"{field!r} (use a field of the dataset's items, index_key or none)"
    )

"""`gtog eval --plan`: the questions (and clusters) a chosen detectable difference needs.

Reads the config, and the run in its output folder when there is one (its checkpoint or
detailed results, summarised afresh); else the dataset, for the questions per cluster.
No model is called and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gtog._errors import InputError

__all__ = ["print_plan"]


def _run_summary(output_dir: Path) -> dict | None:
    """The run's summary, recomputed from its records (None: no run there)."""
    from gtog.eval.results._labels import read_labels
    from gtog.eval.results._log import read_log
    from gtog.eval.results._spec import CHECKPOINT_NAME, DETAILED_NAME
    from gtog.eval.results._views import result_views

    if not any((output_dir / name).is_file() for name in (CHECKPOINT_NAME, DETAILED_NAME)):
        return None
    log = read_log(output_dir)
    methods = list(dict.fromkeys([*log.spec.methods, *(r.method for r in log.records)]))
    _, summary = result_views(
        log.spec,
        log.records,
        methods,
        partial=True,
        pairs=log.pairs,
        labels=read_labels(output_dir),
    )
    return summary


def _questions_per_cluster(root: Path, config_path: Path) -> float:
    """Mean questions per cluster of the config's dataset (`statistics.cluster_by`)."""
    from gtog.eval._dataset import load_dataset
    from gtog.eval.run._clusters import fields_kept
    from gtog.eval.run._config import load_eval_config

    config = load_eval_config(config_path)
    by = config.statistics.cluster_by
    if by == "none":
        return 1.0

    def under_root(value: str) -> Path:
        path = Path(value)
        return path if path.is_absolute() else root / path

    dataset = load_dataset(
        under_root(config.dataset.path) if config.dataset.path else None,
        list(config.indexes),
        files={k: under_root(f) for k, f in config.dataset.files.items()},
        exclude=[under_root(config.output.dir)],
        group_by=fields_kept(config),
        index_field=config.dataset.index_field,
        index_map=config.dataset.index_map,
    )
    items = dataset.items
    if not items:
        return 1.0
    labels = {
        i.index_key if by == "index_key" else i.groups.get(by, (i.index_key, i.qid)) for i in items
    }
    return len(items) / len(labels)


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_plan(
    console: Console,
    *,
    root: Path,
    config: Path | None,
    output: Path | None,
    delta: float,
    discordance: float | None,
    icc: float | None,
    cluster_size: float | None,
) -> None:
    """Print the plan (see the module); InputError on bad input."""
    from gtog.eval.results._plan import Assumptions, plan_rows
    from gtog.eval.run._config import load_eval_config

    if not 0 < delta < 1:
        raise InputError(f"--mde: {delta:g} is not a difference between 0 and 1")
    for name, value in (("--discordance", discordance), ("--icc", icc)):
        if value is not None and not 0 <= value <= 1:
            raise InputError(f"{name}: {value:g} is not between 0 and 1")
    if cluster_size is not None and cluster_size < 1:
        raise InputError(f"--cluster-size: {cluster_size:g} is below 1")
    root = root.resolve()
    if not root.is_dir():
        raise InputError(f"{root}: --root folder not found")
    config_path = (config or root / "eval_config.yaml").resolve()
    cfg = load_eval_config(config_path)
    out_dir = output if output is not None else Path(cfg.output.dir)
    out_dir = (out_dir if out_dir.is_absolute() else root / out_dir).resolve()
    summary = _run_summary(out_dir)
    if not (summary or {}).get("comparisons") and cluster_size is None:
        cluster_size = _questions_per_cluster(root, config_path)
    stated = Assumptions(discordance=discordance, icc=icc, cluster_size=cluster_size)
    rows, source = plan_rows(delta, summary, stated)
    if not console.is_terminal:
        console = Console(width=100, file=console.file)
    console.print(
        f"gtog eval --plan: questions to detect a difference of {delta:g} with 80% power "
        "(paired test, two-sided p < 0.05); no model call, nothing written",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    console.print(source, style="dim", highlight=False, markup=False, soft_wrap=True)
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, collapse_padding=True)
    for col, justify in (
        ("metric", "left"), ("pair", "left"), ("n now", "right"), ("mde now", "right"),
        ("disc/sd", "right"), ("ICC", "right"), ("m", "right"), ("questions", "right"),
        ("clusters", "right"),
    ):  # fmt: skip
        table.add_column(col, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    notes = []
    for r in rows:
        now = "-" if r.n is None else f"{r.n}" + (f" ({r.clusters})" if r.clusters else "")
        table.add_row(
            escape(r.metric), escape(r.pair), now, _num(r.mde), r.spread, _num(r.icc),
            f"{r.cluster_size:.1f}", "-" if r.questions is None else f"{r.questions:,}",
            "-" if r.clusters_needed is None else f"{r.clusters_needed:,}",
        )  # fmt: skip
        if r.note:
            notes.append(f"{r.metric}, {r.pair}: {r.note}")
    console.print(table)
    console.print(
        "n now (clusters); mde now = the difference detectable now; disc = share of questions "
        "the two disagree on (0/1 metrics), sd = spread of the differences; ICC of the "
        "differences within a cluster; m = questions per cluster; questions and clusters = "
        "needed. --discordance, --icc and --cluster-size override the run's.",
        style="dim",
        highlight=False,
        markup=False,
    )
    for note in notes:
        console.print(note, style="yellow", highlight=False, markup=False, soft_wrap=True)
    for line in label_plan(summary, delta):
        console.print(line, highlight=False, markup=False, soft_wrap=True)


def label_plan(summary: dict | None, half: float) -> list[str]:
    """How many people's labels per method bring the corrected (PPI) mean's 95% interval to
    +/- `half` (the --mde), from the judge's error rates measured on the labels so far, or
    an example rate before any label."""
    from gtog.eval.results._calibration import labels_for_width

    width = 2 * half
    blocks = (summary or {}).get("calibration") or {}
    if not blocks:
        sizes = [int(g.get("n") or 0) for g in ((summary or {}).get("by_method") or {}).values()]
        answers = max(sizes, default=0) or 400
        example = labels_for_width(0.1, 0.24, answers, width)
        said = (
            f"about {example} labels per method"
            if example is not None
            else "more labels than there are answers"
        )
        return [
            f"labels: none yet. A corrected mean within +/-{half:g} over {answers} answers per "
            f"method needs, with a judge wrong on 10% of them, {said}; label a few in "
            "gtog eval view (Label answers) and --plan uses the judge's own error rate."
        ]
    out = [
        f"labels per method for a corrected mean within +/-{half:g} (95%), from the judge's "
        "errors on the labels so far:"
    ]
    for metric, methods in blocks.items():
        parts = []
        for method, b in methods.items():
            if b.get("error_var") is None:
                parts.append(f"{method} {b.get('n_labels', 0)} now (10 needed to measure)")
                continue
            need = labels_for_width(b["error_var"], b["judge_var"], b["n_answers"], width)
            said = "more than the answers allow" if need is None else f"{need} needed"
            parts.append(f"{method} {b['n_labels']} now, {said}")
        out.append(f"  {metric}: " + "; ".join(parts))
    return out

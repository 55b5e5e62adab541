"""Prepare a run: validate everything and load projects before any model is called.

Config, dataset, methods, index projects, judges and scorers, the spec, and the output
folder (locked; resume, rescore, refuse or back up by what it holds).
"""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gtog._errors import InputError
from gtog._project import Project, load_project
from gtog._redact import Redactor, environment_secrets
from gtog.eval._dataset import QAItem, load_dataset
from gtog.eval.results._spec import (
    ShardSpec,
)
from gtog.eval.run._answers import GROUP_FIELD, AnswerBook, load_answers
from gtog.eval.run._clusters import check_cluster_field, fields_kept
from gtog.eval.run._config import EvalConfig, load_eval_config
from gtog.eval.run._folder import open_output
from gtog.eval.run._guard import parse_budget
from gtog.eval.run._judging import (
    assertion_prompt,
    judge_prompts,
    load_judge_embedder,
    load_judge_model,
    load_judge_panel,
    scoring_setup,
)
from gtog.eval.run._lock import OutputLock
from gtog.eval.run._methods import RunMethod, resolve_methods
from gtog.eval.run._pairwise import plan_pairwise
from gtog.eval.run._shard import SPLIT
from gtog.eval.run._spec import build_spec
from gtog.eval.run._spending import open_spending, spending
from gtog.eval.run._state import EvalOptions, EvalRun, by_index
from gtog.eval.scoring._score import build_scorers
from gtog.llm._models import import_clients, sharing_models
from gtog.search._methods import METHODS
from gtog.search._preflight import (
    QUESTION_EMBEDDERS,
    VECTORS_READ,
    VectorUse,
    index_problems,
    vector_size_problems,
)

__all__ = ["check_vector_sizes", "prepare"]


def _split(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _load_config(options: EvalOptions) -> tuple[Path, Path, EvalConfig]:
    root = options.root.resolve()
    if not root.is_dir():
        raise InputError(f"{options.root}: --root folder not found")
    config_path = (options.config_path or root / "eval_config.yaml").resolve()
    return root, config_path, load_eval_config(config_path)


def _select_methods(
    options: EvalOptions, config: EvalConfig, config_path: Path, root: Path
) -> dict[str, RunMethod]:
    methods = _split(options.methods) or list(dict.fromkeys(config.methods))
    source = "--methods" if options.methods else f"{config_path}: methods"
    known = [*METHODS, *config.variants, *config.answers, *config.http_methods]
    if isinstance(config.response_type, dict):
        for m in config.response_type:
            if m not in known:
                raise InputError(
                    f"{config_path}: response_type: unknown method {m!r} "
                    f"(choose from {', '.join(known)})"
                )
    return resolve_methods(methods, config, config_path, root, source)


def _select_items(
    options: EvalOptions, config: EvalConfig, config_path: Path, path: Path, items: list[QAItem]
) -> tuple[list[QAItem], list[str]]:
    keys_wanted = _split(options.index_keys)
    dataset_keys = list(dict.fromkeys(i.index_key for i in items))
    for k in keys_wanted or []:
        if k not in dataset_keys:
            raise InputError(f"--index-key/--imdb-key: {k!r} has no questions in {path}")
    selected = keys_wanted or dataset_keys
    for k in selected:
        if k not in config.indexes:
            raise InputError(
                f"{path}: index key {k!r} is not listed under 'indexes' in {config_path}"
            )
    kept = [i for i in items if i.index_key in selected]
    if options.limit is not None:
        if options.limit < 1:
            raise InputError("--limit: must be at least 1")
        seen: dict[str, int] = {}
        limited = []
        for i in kept:
            seen[i.index_key] = seen.get(i.index_key, 0) + 1
            if seen[i.index_key] <= options.limit:
                limited.append(i)
        kept = limited
    return kept, selected


def _question_types(answers: dict[str, AnswerBook]) -> dict[tuple[str, str], str]:
    """(index key, question id) -> the question type an answers file states (the first
    file's, in the config's order)."""
    out: dict[tuple[str, str], str] = {}
    for book in answers.values():
        for key, value in book.groups().items():
            out.setdefault(key, value)
    return out


def _typed(item: QAItem, types: dict[tuple[str, str], str]) -> QAItem:
    """`item` in the group its answers file gives it (the dataset's own label wins)."""
    value = types.get((item.index_key, item.qid))
    if value is None or GROUP_FIELD in item.groups:
        return item
    return item.model_copy(update={"groups": {**item.groups, GROUP_FIELD: value}})


def _load_projects(
    root: Path, config: EvalConfig, keys: list[str], options: EvalOptions
) -> dict[str, Project]:
    projects = {}
    for k in keys:
        folder = Path(config.indexes[k])
        folder = folder if folder.is_absolute() else root / folder
        overrides = options.model_overrides(folder) if options.model_overrides else None
        projects[k] = load_project(folder, overrides)
    # inspect every index's layout now, several at a time (file headers, LanceDB in Rust)
    with ThreadPoolExecutor(max_workers=8, thread_name_prefix="gtog-inspect") as pool:
        list(pool.map(lambda p: p.compat, projects.values()))
    return projects


def _index_label(key: str, project: Project) -> str:
    return f"index {key!r} ({project.root})"


def _check_indexes(run: EvalRun) -> None:
    """Every (index, method) still to search can be read: else one line each, before any
    question (table schemas and vector tables only; no index is loaded)."""
    lines = []
    slots = dict.fromkeys(
        (q.index_key, m) for q, m, _ in run.todo if run.run_methods[m].reads_index
    )
    for key, method in sorted(slots):
        project = run.projects[key]
        base = run.run_methods[method].base
        assert base is not None
        for problem in index_problems(project, base):
            lines.append(f"{_index_label(key, project)}: {method}: {problem}")
    if lines:
        raise InputError("\n".join(lines))


async def check_vector_sizes(run: EvalRun) -> None:
    """Every vector table the run's searches read holds vectors of the size their embedding
    model returns: else one line each (InputError), before any question.

    The one preparation step that calls a model (after the reachability check): one
    embedding per embedding model, of the first question the run searches with it, kept in
    `run.ahead` for that search to take (see `gtog.search._preflight`), with the other
    questions of the first round (the first `concurrency` pairs) that embed the question
    with it, at the same time. Done once per run.
    """
    if run.ahead is not None:
        return

    def embedder(item: QAItem, method: str, bases: frozenset[str]) -> tuple[str, str] | None:
        """(base method, embedding model id) of a pair whose method is in `bases`."""
        base = run.run_methods[method].base or method
        if method in run.answers or base not in bases:
            return None
        settings = run.spec.method_settings.get(method, {}).get(item.index_key, {})
        model_id = (settings.get("embedding") or {}).get("id")
        return None if model_id is None else (base, model_id)

    # (index, embedding model) -> its methods, and its first question: of a method that
    # embeds the question itself (True) where there is one, so that it takes the embedding
    slots: dict[tuple[str, str], tuple[list[str], dict[bool, QAItem]]] = {}
    for item, method, _ in run.todo:
        if (found := embedder(item, method, VECTORS_READ)) is None:
            continue
        base, model_id = found
        methods, first = slots.setdefault((item.index_key, model_id), ([], {}))
        if base not in methods:
            methods.append(base)
        first.setdefault(base in QUESTION_EMBEDDERS, item)
    # the questions the first round embeds (the pairs that start at once): with the check's
    also: dict[tuple[str, str], list[str]] = {}
    for item, method, _ in by_index(run.todo)[: run.concurrency]:
        if (found := embedder(item, method, QUESTION_EMBEDDERS)) is not None:
            also.setdefault((item.index_key, found[1]), []).append(item.question)
    uses = []
    for (key, model_id), (methods, first) in slots.items():
        project = run.projects[key]
        question = (first.get(True) or first[False]).question
        label = _index_label(key, project)
        more = tuple(also.get((key, model_id), ()))
        uses.append(VectorUse(label, project, model_id, tuple(methods), question, more))
    if uses:  # the clients' imports (seconds) in a worker thread, not on the loop
        await asyncio.get_running_loop().run_in_executor(None, import_clients)
    with spending(run):  # through the run's cache: a second run asks nothing
        lines, run.ahead = await vector_size_problems(uses)
    if lines:
        raise InputError("\n".join(lines))


def _index_notes(run: EvalRun) -> None:
    """One line per index read in an older graphrag layout (what was adapted)."""
    keys = dict.fromkeys(q.index_key for q, m, _ in run.todo if run.run_methods[m].reads_index)
    for key in keys:
        project = run.projects[key]
        note = project.compat.note(_index_label(key, project))
        if note is not None:
            run.dataset_warnings.append(note)


def _secrets(projects: dict[str, Project], methods: dict[str, RunMethod]) -> list[str]:
    keys: list[str] = [
        secret
        for m in methods.values()
        if m.http is not None
        for secret in m.http.secret_values(os.environ)
    ]
    for project in projects.values():
        for models in (project.config.completion_models, project.config.embedding_models):
            keys += [m.api_key for m in models.values() if m.api_key]
    return keys + environment_secrets(os.environ)


def prepare(options: EvalOptions) -> EvalRun:
    """Validate everything and load projects; raises InputError before any work is done.

    The output folder is locked for this run (`EvalRun.close()` releases it).
    """
    if options.rescore and (options.resume or options.skip_judges):
        raise InputError("--rescore: not with --resume or --skip-judges")
    root, config_path, config = _load_config(options)

    def under_root(value: str | Path) -> Path:
        path = Path(value)
        return path if path.is_absolute() else root / path

    output_dir = under_root(options.output_dir or Path(config.output.dir)).resolve()
    dataset_path = under_root(config.dataset.path) if config.dataset.path else None
    dataset = load_dataset(
        dataset_path,
        list(config.indexes),
        files={k: under_root(f) for k, f in config.dataset.files.items()},
        exclude=[output_dir],
        group_by=fields_kept(config),
        index_field=config.dataset.index_field,
        index_map=config.dataset.index_map,
    )
    all_items = dataset.items
    if "metrics" not in config.model_fields_set and dataset.has_evidence:
        config = config.model_copy(update={"metrics": [*config.metrics, "evidence_recall"]})
    dataset_path = dataset_path or config_path
    if "evidence_recall" in config.metrics and not dataset.has_evidence:
        dataset.warnings.append(
            f"{config_path}: metrics: evidence_recall is asked for but no question in the "
            "dataset has gold evidence (a 'context' field); it stays unscored"
        )
    run_methods = _select_methods(options, config, config_path, root)
    methods = list(run_methods)
    items, keys = _select_items(options, config, config_path, dataset_path, all_items)
    projects = _load_projects(root, config, keys, options)
    models: dict[str, object] = {}  # (one per model entry: the judges' and the engines')
    with sharing_models(models):
        panels = {
            k: load_judge_panel(config, p.config, p.settings_path) for k, p in projects.items()
        }
        # a panel's first model is the index's judge where one model judges (head to head)
        judges = {
            k: next(iter(panels[k].values()))
            if panels[k]
            else load_judge_model(config, p.config, p.settings_path)
            for k, p in projects.items()
        }
        embedders = {
            k: load_judge_embedder(config, p.config, p.settings_path) for k, p in projects.items()
        }
    prompts = judge_prompts(root, config, config_path)
    claims_prompt = assertion_prompt(root, config, config_path)
    parts = {
        "projects": projects,
        "methods": run_methods,
        "judges": judges,
        "panels": panels,
        "embedders": embedders,
        "all_items": all_items,
        "config_path": config_path,
        "dataset_path": dataset_path,
        "prompts": prompts,
        "assertion_prompt": claims_prompt,
        "repeats": dataset.repeated_questions,
    }
    if config.judge.trials > 1 and config.judge.temperature == 0:
        dataset.warnings.append(
            f"{config_path}: judge.trials: {config.judge.trials} trials at temperature 0 "
            "measure nothing (a deterministic judge repeats itself); set judge.temperature"
        )
    answers = load_answers(run_methods, all_items)
    for name, book in answers.items():
        if book.unmatched:
            dataset.warnings.append(
                f"{book.path}: {book.unmatched} answer(s) match no question of the dataset "
                f"(method {name!r}); they are left out"
            )
    group_by = list(config.dataset.group_by)
    types = _question_types(answers)
    if types:
        items = [_typed(i, types) for i in items]
        group_by += [GROUP_FIELD] if GROUP_FIELD not in group_by else []
    check_cluster_field(config, config_path, dataset_path, items)
    spec = build_spec(parts, options, config)
    spec.pairwise, pair_scorers = plan_pairwise(
        root, config, config_path, methods, judges, options.skip_judges
    )
    spec.group_by = group_by
    if config.pairwise is not None and config.pairwise.trials > 1 and config.judge.temperature == 0:
        dataset.warnings.append(
            f"{config_path}: pairwise.trials: {config.pairwise.trials} trials per order at "
            "judge.temperature 0 repeat one verdict; set judge.temperature"
        )
    parse_budget(options.max_errors, 1)
    cache_dir = None
    if not options.no_cache and config.cache.enabled:  # beside the shards: shared by them
        cache_dir = under_root(config.cache.dir or output_dir / "cache").resolve()
    if options.shard is not None:
        output_dir = output_dir / options.shard.folder
    run = EvalRun(
        options=options,
        config=config,
        config_path=config_path,
        items=items,
        methods=methods,
        run_methods=run_methods,
        answers=answers,
        projects=projects,
        judges=judges,
        prompts=prompts,
        scorers={
            k: build_scorers(
                list(config.metrics),
                scoring_setup(
                    config, j, prompts, embedders[k], panels[k], claims_prompt, projects[k]
                ),
            )
            for k, j in judges.items()
        },
        pair_scorers=pair_scorers,
        output_dir=output_dir,
        spec=spec,
        redactor=Redactor(_secrets(projects, run_methods)),
        dataset_warnings=dataset.warnings,
        cache_dir=cache_dir,
        models=models,
    )
    run.spec.pairs = len(run.pairs)
    if options.shard is not None:
        run.spec.shard = ShardSpec(
            index=options.shard.index, count=options.shard.count, pairs=len(run.pairs), split=SPLIT
        )
    run.lock = OutputLock(output_dir).acquire()
    try:
        open_output(run)
        _check_indexes(run)
        _index_notes(run)
        open_spending(run)
    except BaseException:
        run.close()
        raise
    _relabel(run)
    return run


def _relabel(run: EvalRun) -> None:
    """Earlier records take the dataset's current group labels (labels change no answer)."""
    groups = {q.qid: q.groups for q in run.items}
    for r in [*run.done, *run.pairs_done]:
        if r.qid in groups:
            r.groups = dict(groups[r.qid])

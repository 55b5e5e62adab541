"""`eval_config.yaml`: what to evaluate, with which methods and judges, and where to write."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gtog._errors import InputError
from gtog.eval.run._answers import AnswersFile
from gtog.eval.scoring._base import METRIC_GROUPS, SCORERS
from gtog.eval.scoring._judges import ALL_METRICS, FIELDS
from gtog.eval.scoring._pairwise import CRITERIA, DEFAULT_CRITERIA
from gtog.search._endpoints import HttpEndpoint

__all__ = [
    "ALL_METRICS",
    "DEFAULT_RESPONSE_TYPE",
    "NAME_PATTERN",
    "AbstentionConfig",
    "AttributionConfig",
    "CacheConfig",
    "DatasetConfig",
    "EvalConfig",
    "JudgeConfig",
    "LimitsBlock",
    "LimitsConfig",
    "OutputConfig",
    "PairwiseConfig",
    "StatisticsConfig",
    "TimeoutsConfig",
    "load_eval_config",
]

DEFAULT_RESPONSE_TYPE = "Single Paragraph"

NAME_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")
"""A method's, variant's, answers file's or HTTP method's name: it becomes part of file
names (`qa/responses_<name>.json`)."""


def check_name(name: str) -> str:
    """`name` when it is a valid method name, else ValueError saying what is allowed."""
    if not NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"{name!r} is not a usable name: use letters, digits, '_', '.' and '-' only "
            "(it becomes part of file names)"
        )
    return name


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetConfig(_Strict):
    """Where the QA dataset is: a file or a folder searched recursively, and/or files by key."""

    path: str | None = None
    files: dict[str, str] = Field(default_factory=dict)
    """Index key -> QA file, for files whose key their folder or name does not give."""
    group_by: list[str] = Field(default_factory=list)
    """Item fields to report results by (question type, hops, ...): `by_group` in the summary."""
    index_field: str | None = None
    """The item field naming the index a question is about (GraphRAG-Bench: `source`, the
    corpus); default `imdb_key` / `index_key`."""
    index_map: dict[str, str] = Field(default_factory=dict)
    """That field's values -> index keys, where they are not the keys themselves."""

    @model_validator(mode="after")
    def _somewhere(self) -> DatasetConfig:
        if self.path is None and not self.files:
            raise ValueError("give dataset.path or dataset.files")
        return self


class OutputConfig(_Strict):
    """Where results go."""

    dir: str = "eval/results"
    save_intermediate: bool = True
    """Keep each answer's context text and retrieved sources in the detailed results."""
    qa_responses: bool = True
    """Also write per-method responses in the graphrag-eval response format."""


class JudgeConfig(_Strict):
    """The LLM-as-judge settings."""

    model: str | None = None
    """A completion model id in each index's settings.yaml; None = its local_search model."""
    temperature: float = 0.0
    max_tokens: int = 300
    structured_output: bool = True
    """Ask for JSON output (`response_format: json_object`) where the model supports it."""
    prompts_dir: str | None = None
    """A folder with <metric>.txt prompt files replacing the built-in ones (relative to
    --root), or a built-in set by name: `builtin:local` (worded for the local model)."""
    trials: int = Field(default=1, ge=1, le=15)
    """Ask each judge this many times and score by majority (a tie is unscored); the
    `assertions` scorer asks about each assertion this many times."""
    assertion_threshold: float = Field(default=0.5, ge=0.0, lt=1.0)
    """An assertion passes when more than this share of its trials find it supported."""
    models: list[str] | None = None
    """A judge panel: model ids of the projects' settings.yaml (completion_models) or
    LiteLLM names (`provider/model`); each judge metric is asked of every model, and the
    verdict is their strict majority (no majority: unscored). Replaces `model`."""

    scales: dict[str, tuple[int, int]] = Field(default_factory=dict)
    """A graded judge's scale, `{metric: [low, high]}` (integers): the judge's prompt asks
    for an integer in it (the built-in `correctness_graded` and `completeness_graded` are
    0-10 unless given here; a 0/1 judge given a scale needs a prompt of your own in
    `prompts_dir` asking for it). Tables show the metric on its scale; the verdict line
    and charts show it as 0-1."""

    @field_validator("scales")
    @classmethod
    def _scales(cls, value: dict[str, tuple[int, int]]) -> dict[str, tuple[int, int]]:
        for metric, (low, high) in value.items():
            if metric not in FIELDS:
                raise ValueError(
                    f"{metric!r} is not an LLM judge (choose from {', '.join(FIELDS)})"
                )
            if not low < high:
                raise ValueError(f"{metric}: the scale [{low}, {high}] needs low < high")
        return value

    @field_validator("models")
    @classmethod
    def _panel(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if len(value) < 2:
            raise ValueError("a panel names at least two models (one judge: judge.model)")
        if any(not m.strip() for m in value):
            raise ValueError("a panel model is an empty name")
        doubled = [m for m in dict.fromkeys(value) if value.count(m) > 1]
        if doubled:
            raise ValueError(f"{doubled[0]!r} is named twice (one vote per model)")
        return value

    @model_validator(mode="after")
    def _one_or_panel(self) -> JudgeConfig:
        if self.models is not None and self.model is not None:
            raise ValueError("give judge.model (one judge) or judge.models (a panel), not both")
        return self


class PairwiseConfig(_Strict):
    """Head-to-head judging: each pair of methods' answers compared per criterion."""

    criteria: list[str | dict[str, str]] | dict[str, str] = Field(
        default_factory=lambda: list(DEFAULT_CRITERIA)
    )
    """Built-in names (comprehensiveness, diversity, empowerment, relevance, directness),
    and/or `{name: description}` of your own."""
    pairs: Literal["all"] | list[list[str]] = "all"
    """`all` pairs of the run's methods, or a list of `[a, b]`."""
    trials: int = Field(default=2, ge=1, le=15)
    """Judge calls per order (each comparison is asked in both orders)."""
    aa_check: bool = True
    """Also compare each method with itself: the judge's own position or slot bias."""

    @field_validator("criteria")
    @classmethod
    def _known(cls, value: Any) -> Any:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if isinstance(item, str) and item not in CRITERIA:
                raise ValueError(
                    f"unknown criterion {item!r} (built in: {', '.join(CRITERIA)}; or give "
                    "{name: description})"
                )
        if not items or any(not str(n).strip() for n in criteria_names(value)):
            raise ValueError("name at least one criterion")
        return value

    @field_validator("pairs")
    @classmethod
    def _two(cls, value: Any) -> Any:
        if isinstance(value, list):
            for pair in value:
                if len(pair) != 2:
                    raise ValueError(f"a pair names two methods, got {pair}")
        return value

    def criteria_map(self) -> dict[str, str]:
        """criterion -> description (the built-in ones' from `CRITERIA`)."""
        items = self.criteria if isinstance(self.criteria, list) else [self.criteria]
        out: dict[str, str] = {}
        for item in items:
            if isinstance(item, str):
                out[item] = CRITERIA[item]
            else:
                out.update({str(k): str(v) for k, v in item.items()})
        return out


def criteria_names(value: Any) -> list[str]:
    """The names a `pairwise.criteria` value gives."""
    items = value if isinstance(value, list) else [value]
    return [n for i in items for n in ([i] if isinstance(i, str) else list(i))]


class TimeoutsConfig(_Strict):
    """Upper bounds in seconds; a search or judge call past its bound is that item's error."""

    search: float = Field(default=600.0, gt=0)
    judge: float = Field(default=180.0, gt=0)


class AbstentionConfig(_Strict):
    """What counts as an answer that declines (gtog.eval.results._abstention)."""

    patterns: list[str] = Field(default_factory=list)
    """Regular expressions of your own, searched case-insensitively in an answer's first
    sentence: a match is an abstention."""
    builtin: bool = True
    """Also use the built-in placeholders and decline patterns."""

    @field_validator("patterns")
    @classmethod
    def _compiles(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a regular expression ({exc})") from None
        return value


class AttributionConfig(_Strict):
    """Failure attribution (gtog.eval.results._attribution)."""

    evidence_threshold: float = Field(default=0.5, ge=0.0, le=1.0)
    """evidence_recall at or above this: the gold evidence was in what the method found."""


_SECONDS = {"s": 1, "m": 60, "h": 3600}


class LimitsBlock(_Strict):
    """Upper bounds of one scope (the run, or each question-method pair); absent: none."""

    usd: float | None = Field(default=None, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    """Prompt + output tokens of chat calls and input tokens of embedding calls."""
    calls: int | None = Field(default=None, gt=0)
    """Chat and embedding requests."""
    time: float | None = Field(default=None, gt=0)
    """Seconds (a number, or `90s`, `30m`, `2h`)."""

    @field_validator("time", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            try:
                if text and text[-1] in _SECONDS:
                    return float(text[:-1]) * _SECONDS[text[-1]]
                return float(text)
            except ValueError:
                raise ValueError(
                    f"{value!r} is not a duration (seconds, or 90s, 30m, 2h)"
                ) from None
        return value


class LimitsConfig(_Strict):
    """Spending limits: `run` (the whole run: it stops taking new pairs) and `pair` (each
    question-method pair: over it, the pair is an error of kind `limit`)."""

    run: LimitsBlock = Field(default_factory=LimitsBlock)
    pair: LimitsBlock = Field(default_factory=LimitsBlock)


class CacheConfig(_Strict):
    """The model-call cache (on by default): replies kept by request, replayed when asked
    again (see `gtog.llm._cache`)."""

    enabled: bool = True
    dir: str | None = None
    """The cache folder (relative to --root); None: `<output.dir>/cache`, shared by shards."""


class CitationsConfig(_Strict):
    """The citation metrics (`citations`, `citation_support`)."""

    max_checked: int = Field(default=8, ge=1, le=100)
    """`citation_support`: (sentence, cited record) pairs judged per answer at most,
    evenly spread over the answer's citations."""


class StatisticsConfig(_Strict):
    """How the summary's intervals and tests treat questions that belong together."""

    cluster_by: str = "index_key"
    """`index_key` (questions of one index are one cluster), a dataset field (its values
    name the clusters; the field need not be in `dataset.group_by`), or `none` (every
    question independent)."""

    @field_validator("cluster_by")
    @classmethod
    def _named(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name a dataset field, index_key or none")
        return value


class RoutingConfig(_Strict):
    """The routing analysis (the summary's `routing`)."""

    routers: list[str] = Field(default_factory=list)
    """Methods that route each question to another method (a user's agent): compared with
    the oracle and the best single method, never one of the methods they are made from.
    A method whose answers name a `route` is a router without being listed."""

    @field_validator("routers")
    @classmethod
    def _names(cls, value: list[str]) -> list[str]:
        for name in value:
            check_name(name)
        return value


class EvalConfig(_Strict):
    """The whole evaluation config."""

    dataset: DatasetConfig
    indexes: dict[str, str] = Field(min_length=1)
    indexes_template: str | None = None
    """A graphrag project folder whose settings.yaml, prompts/ and .env a project that
    `gtog eval prepare` creates is made from (None: `gtog init`'s defaults)."""
    documents: dict[str, str] = Field(default_factory=dict)
    """Index key -> the document file (or folder of documents) to index, for keys whose
    documents are not beside their QA file (`eval/<key>/<key>.txt`)."""
    methods: list[str] = Field(default_factory=lambda: ["tog", "local", "basic"], min_length=1)
    output: OutputConfig = Field(default_factory=OutputConfig)
    judge: JudgeConfig = Field(default_factory=JudgeConfig)
    concurrency: int = Field(default=4, ge=1, le=256)
    """Model calls (and HTTP method requests) in flight at once; the run keeps a quarter
    more questions going (`gtog.llm._slots`)."""
    epochs: int = Field(default=1, ge=1, le=100)
    """Answer each (question, method) this many times (repeats are new samples); each
    metric is averaged per question, and 0/1 metrics also get pass@k, pass^k and the flip
    rate (`by_method[m].epochs`)."""
    metrics: list[str] = Field(default_factory=lambda: list(ALL_METRICS))
    """Not given: the four judges, plus evidence_recall when the dataset has evidence."""
    tog_search: dict[str, Any] = Field(default_factory=dict)
    """Overrides for ToG settings (width, depth, ...) on top of each index's settings.yaml."""
    local_search: dict[str, Any] = Field(default_factory=dict)
    """Overrides of settings.yaml's local_search block (and `community_level`)."""
    basic_search: dict[str, Any] = Field(default_factory=dict)
    """Overrides of settings.yaml's basic_search block."""
    global_search: dict[str, Any] = Field(default_factory=dict)
    """Overrides of settings.yaml's global_search block (and `community_level`,
    `dynamic_community_selection`)."""
    drift_search: dict[str, Any] = Field(default_factory=dict)
    """Overrides of settings.yaml's drift_search block (and `community_level`)."""
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """name -> {method: <method>, <its settings block>: {...}, response_type: ...}: a
    configuration compared as if it were a method (list its name under `methods`)."""
    answers: dict[str, AnswersFile] = Field(default_factory=dict)
    """name -> a file of answers made elsewhere (gtog's JSON lines), or `{path, format,
    fields}` for other benchmarks' files: a method whose answers are read."""
    http_methods: dict[str, HttpEndpoint] = Field(default_factory=dict)
    """name -> an endpoint of a running service that answers each question (see
    `gtog.search._http`): a method whose answers are asked for."""
    response_type: str | dict[str, str] = DEFAULT_RESPONSE_TYPE
    """One answer format for every method, or one per method ({tog: ..., local: ...})."""
    timeouts: TimeoutsConfig = Field(default_factory=TimeoutsConfig)
    pairwise: PairwiseConfig | None = None
    """Head-to-head judging of each pair of methods (off when absent)."""
    abstention: AbstentionConfig = Field(default_factory=AbstentionConfig)
    """Which answers count as declining (abstention rate, accuracy over the answered)."""
    attribution: AttributionConfig = Field(default_factory=AttributionConfig)
    """When a wrong answer counts as a retrieval or a generation failure."""
    cache: CacheConfig = Field(default_factory=CacheConfig)
    """The model-call cache: `{enabled, dir}`."""
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    """Spending limits per run and per question-method pair."""
    statistics: StatisticsConfig = Field(default_factory=StatisticsConfig)
    citations: CitationsConfig = Field(default_factory=CitationsConfig)
    """`citation_support`'s `max_checked` (8)."""
    """How questions are clustered for intervals and tests (by index key by default)."""
    routing: RoutingConfig = Field(default_factory=RoutingConfig)
    """Which methods are routers (`routers`), for the summary's `routing`."""
    truncated_answers: Literal["error", "score"] = "error"
    """An answer cut at max_tokens: the pair's error (default), or judged as it is (the
    record and the summary still mark it `truncated`)."""

    @field_validator("answers", mode="before")
    @classmethod
    def _answer_paths(cls, value: Any) -> Any:
        """`{name: path}` (gtog's own format) is `{name: {path: path}}`."""
        if isinstance(value, dict):
            return {k: {"path": v} if isinstance(v, str) else v for k, v in value.items()}
        return value

    @field_validator("variants", "answers", "http_methods")
    @classmethod
    def _names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            check_name(name)
        return value

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, value: list[str]) -> list[str]:
        value = [p for m in value for p in METRIC_GROUPS.get(m, (m,))]  # `citations`: both
        known = list(SCORERS)
        unknown = [m for m in value if m not in known]
        if unknown:
            raise ValueError(
                f"unknown metric {unknown[0]!r} (choose from {', '.join([*known, *METRIC_GROUPS])})"
            )
        return list(dict.fromkeys(value))

    def response_type_for(self, method: str) -> str | None:
        """The configured response type of `method` (None: not configured for it)."""
        if "response_type" not in self.model_fields_set:
            return None
        if isinstance(self.response_type, str):
            return self.response_type
        return self.response_type.get(method)


def _field_path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in loc) or "(top level)"


def load_eval_config(path: Path) -> EvalConfig:
    """Read and validate an eval config; InputError names the file and the bad key."""
    if not path.is_file():
        raise InputError(f"{path}: eval config not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise InputError(f"{path}:{where} malformed YAML: {problem}") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping of settings at the top level")
    try:
        return EvalConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = _field_path(err["loc"])
        if err["type"] == "extra_forbidden":
            raise InputError(f"{path}: unknown key {field!r}") from None
        if err["type"] == "missing":
            raise InputError(f"{path}: missing required key {field!r}") from None
        message = str(err["msg"]).removeprefix("Value error, ")
        raise InputError(f"{path}: {field}: {message}") from None

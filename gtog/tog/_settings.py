"""The `tog_search` settings block: read from a project's settings.yaml, with overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from gtog._errors import InputError
from gtog._project import SETTINGS_FILES

__all__ = [
    "EVIDENCE_LINES",
    "FORK_KEYS",
    "FORK_UNUSED",
    "SETTINGS_FILES",
    "ToGPromptFiles",
    "ToGSettings",
    "load_tog_settings",
    "spec_settings",
    "validate_tog_overrides",
]


class ToGPromptFiles(BaseModel):
    """Prompt file paths (relative to the project root); None = the built-in prompt."""

    model_config = ConfigDict(extra="forbid")

    entity_linking: str | None = None
    relation_pruning: str | None = None
    entity_pruning: str | None = None
    edge_pruning: str | None = None
    reasoning: str | None = None
    answer: str | None = None


EVIDENCE_LINES = (
    "\nAfter the answer, write a line `Evidence:` and under it each relation of the evidence "
    "paths the answer relies on, one per line, as `ENTITY A --[relation]--> ENTITY B`, with "
    "the entity names exactly as the evidence writes them."
)
"""What `tog_search.evidence_lines: true` adds to ToG's answer format (`response_type`);
`path_validity` checks the lines against the graph."""


class ToGSettings(BaseModel):
    """Think-on-Graph search parameters (paper defaults: width 3, depth 3, 0.4 / 0)."""

    model_config = ConfigDict(extra="forbid")

    width: int = Field(default=3, ge=1, le=20)
    """Beam width N: paths kept per depth, topic entities kept, relations kept per path."""
    depth: int = Field(default=3, ge=1, le=10)
    """Maximum depth D (hops explored)."""
    temperature_exploration: float = Field(default=0.4, ge=0.0, le=2.0)
    """Temperature of the pruning calls."""
    temperature_reasoning: float = Field(default=0.0, ge=0.0, le=2.0)
    """Temperature of entity linking, the sufficiency check and the answer."""
    max_candidates: int = Field(default=20, ge=1, le=500)
    """Candidate edges per frontier entity shown to the LLM (highest weight first)."""
    use_text_units: bool = False
    """Add the text units the path relationships cite to the answer evidence."""
    max_text_units: int = Field(default=5, ge=0, le=100)
    """At most this many text units in the answer evidence."""
    pruning_max_tokens: int | None = Field(default=400, ge=16)
    """Output-token cap of linking, pruning and reasoning replies (None = the model's)."""
    answer_max_tokens: int | None = Field(default=None, ge=16)
    """Output-token cap of the answer (None = the model's)."""
    json_mode: bool = True
    """Ask for JSON output in linking, pruning and reasoning calls."""
    response_type: str = "Single Paragraph"
    """Free-form description of the answer's format."""
    evidence_lines: bool = False
    """Ask the answer to end with the edges it relies on, one per line (`Evidence:`, then
    `A --[relation]--> B`), for the `path_validity` metric to check against the graph."""
    completion_model_id: str | None = None
    """A completion model id of settings.yaml; None = the local_search model."""
    embedding_model_id: str | None = None
    """An embedding model id of settings.yaml; None = the local_search embedding model."""
    pruning: Literal["paper", "edges"] = "paper"
    """`paper`: a relation-pruning then an entity-pruning call per beam path (the paper's);
    `edges`: one call per beam path scores candidate edges with the entities they reach."""
    text_guided: bool = False
    """Prune reached entities by how well their text units match the question (no LLM
    call), score the candidates of all beam paths in one call per depth, and show the
    best-matching text units to the sufficiency check and the answer (after ToG-2)."""
    min_relevance: float = Field(default=0.1, ge=0.0, le=1.0)
    """`edges` / `text_guided`: candidates the LLM scores below this are not followed."""
    text_unit_max_tokens: int = Field(default=2000, ge=1)
    """`text_guided`: token budget of the text units in the evidence (with max_text_units)."""
    prune_strategy: Literal["llm", "semantic", "bm25"] = "llm"
    """How the paper's relation and entity pruning score candidates: `llm` (the paper's two
    calls per beam path), `semantic` (embedding similarity to the question: relations
    embedded per path, entities by the index's stored description vectors where they
    exist) or `bm25` (lexical: Okapi BM25 of the question's words); the last two make no
    LLM call to prune (`pruning: paper` only)."""
    prompts: ToGPromptFiles = Field(default_factory=ToGPromptFiles)

    @model_validator(mode="after")
    def _strategy(self) -> ToGSettings:
        if self.prune_strategy != "llm" and self.graded:
            raise ValueError(
                f"prune_strategy {self.prune_strategy} scores the paper's relation and "
                "entity pruning: use it with pruning: paper and text_guided: false"
            )
        return self

    @property
    def llm_pruning(self) -> bool:
        """Whether pruning asks the LLM (`prune_strategy: llm`)."""
        return self.prune_strategy == "llm"

    @property
    def graded(self) -> bool:
        """True for the graphrag-fitted variants (absolute scores, question pre-ranking)."""
        return self.pruning == "edges" or self.text_guided

    @property
    def variant(self) -> str:
        """`paper`, `edges`, `paper+text`, `edges+text`, `paper+semantic` or `paper+bm25`."""
        strategy = "" if self.llm_pruning else f"+{self.prune_strategy}"
        return self.pruning + ("+text" if self.text_guided else "") + strategy

    @property
    def stages(self) -> tuple[str, ...]:
        """The LLM stages (usage categories) of this variant, in call order."""
        if not self.llm_pruning:
            return ("entity_linking", "reasoning", "answer")
        pruning = ("relation_pruning", "entity_pruning") if not self.graded else ("edge_pruning",)
        return ("entity_linking", *pruning, "reasoning", "answer")

    @property
    def max_embedding_calls(self) -> int:
        """Embedding requests per question beyond linking's: `semantic` embeds the question
        once, and per beam path and depth at most its relations and the reached entities
        without a stored vector (1 + 2·N·D); the other strategies embed nothing more."""
        if self.prune_strategy != "semantic":
            return 0
        return 1 + 2 * self.width * self.depth

    @property
    def call_bound_rule(self) -> str:
        """The formula of `max_llm_calls` for this variant."""
        if not self.llm_pruning:
            return "D + 1"
        if self.text_guided:
            return "2·D + 1"
        return "N·D + D + 1" if self.pruning == "edges" else "2·N·D + D + 1"

    @property
    def max_llm_calls(self) -> int:
        """The guaranteed bound on LLM calls per question (linking and answer included).

        paper: 2·N·D + D + 1; edges: N·D + D + 1; text_guided (either pruning): 2·D + 1;
        `prune_strategy` semantic or bm25: D + 1 (linking, D - 1 sufficiency checks, answer).
        """
        n, d = self.width, self.depth
        if not self.llm_pruning:
            return d + 1
        if self.text_guided:
            return 2 * d + 1
        per_depth = n if self.pruning == "edges" else 2 * n
        return per_depth * d + d + 1


def spec_settings(settings: ToGSettings, prompts: dict[str, str]) -> dict[str, Any]:
    """The settings as a run's spec records them, and the hash of the variant's prompts.

    The variant keys (`pruning`, `text_guided`, `min_relevance`, `text_unit_max_tokens`)
    are recorded where they act: none for the paper's ToG, so its spec is what it was
    before they existed; `min_relevance` for either new variant, the token budget with
    `text_guided`. Only the prompts of the variant's stages are hashed.
    """
    from gtog._hashing import stable_hash

    drop = {"prompts", "pruning", "text_guided", "min_relevance", "text_unit_max_tokens"}
    if not settings.evidence_lines:  # (absent from the spec of runs that do not ask)
        drop.add("evidence_lines")
    if settings.llm_pruning:
        drop.add("prune_strategy")  # (the spec of a run before the key existed)
    if settings.graded:
        drop -= {"pruning", "text_guided", "min_relevance"}
    if settings.text_guided:
        drop.discard("text_unit_max_tokens")
    used = {name: text for name, text in prompts.items() if name in settings.stages}
    return {"tog_search": settings.model_dump(exclude=drop), "prompts": stable_hash(used)}


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_block(root: Path) -> tuple[dict[str, Any], str]:
    for name in SETTINGS_FILES:
        path = root / name
        if path.exists():
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
            except yaml.YAMLError as exc:
                raise InputError(f"{path}: not valid YAML ({exc})") from exc
            if not isinstance(data, dict):
                raise InputError(f"{path}: expected a mapping at the top level")
            block = data.get("tog_search") or {}
            if not isinstance(block, dict):
                raise InputError(f"{path}: tog_search: expected a mapping")
            return block, str(path)
    return {}, str(root / SETTINGS_FILES[0])


FORK_KEYS = {
    "chat_model_id": "completion_model_id",
    "relation_scoring_prompt": "prompts.relation_pruning",
    "entity_scoring_prompt": "prompts.entity_pruning",
    "reasoning_prompt": "prompts.answer",
}
"""The `tog_search:` keys of the graphrag fork users carry -> gtog's (`width`, `depth`,
`embedding_model_id`, `prune_strategy` and the temperatures are gtog's names too)."""

FORK_UNUSED = {
    "num_retain_entity": "each graphrag relationship reaches one entity, so there is no "
    "group of entities per relation to sample from",
    "max_context_tokens": "the evidence is the kept paths (at most width a depth), not cut to "
    "a token budget",
    "max_exploration_paths": "the beam keeps width paths (each path's evidence is kept)",
}
"""Fork keys gtog's ToG has no use for, and why: named in a note, not an error."""

_NOTED: set[str] = set()


def _fork_shape(block: dict[str, Any], source: str) -> tuple[dict[str, Any], list[str]]:
    """`block` with the fork's keys in gtog's names, and a line per key mapped or unused."""
    out = {k: v for k, v in block.items() if k not in FORK_KEYS and k not in FORK_UNUSED}
    said: list[str] = []
    prompts = dict(out.get("prompts") or {})
    for key, new in FORK_KEYS.items():
        if key not in block:
            continue
        said.append(f"{key} -> {new}")
        if new.startswith("prompts."):
            prompts[new.split(".", 1)[1]] = block[key]
        elif new in block:
            raise InputError(f"{source}: tog_search: {key} and {new} name the same model")
        else:
            out[new] = block[key]
    if prompts:
        out["prompts"] = prompts
        if any(k.endswith("_prompt") for k in block if k in FORK_KEYS):
            out.setdefault("json_mode", False)  # their prompts ask for a bare list of scores
    said += [f"{k} not used ({why})" for k, why in FORK_UNUSED.items() if k in block]
    return out, said


def _say_fork(source: str, said: list[str]) -> None:
    """Name once per file (and process) how a fork-shaped block was read."""
    if not said or source in _NOTED:
        return
    _NOTED.add(source)
    import logging

    from rich.console import Console
    from rich.markup import escape

    note = f"{source}: tog_search read in the graphrag fork's shape: {'; '.join(said)}"
    logging.getLogger("gtog.tog").info("%s", note)
    Console(stderr=True).print(
        f"[cyan]note:[/cyan] {escape(note)}", highlight=False, soft_wrap=True
    )


def _invalid(source: str, exc: ValidationError) -> InputError:
    err = exc.errors()[0]
    key = ".".join(str(p) for p in ("tog_search", *err["loc"]))
    msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
    return InputError(f"{source}: {key}: {msg}")


def validate_tog_overrides(overrides: dict[str, Any], source: str) -> None:
    """Check ToG overrides on their own, so an error names the file that holds them."""
    data, _ = _fork_shape(overrides, source)
    try:
        ToGSettings.model_validate(data)
    except ValidationError as exc:
        raise _invalid(source, exc) from None


def load_tog_settings(root: Path, overrides: dict[str, Any] | None = None) -> ToGSettings:
    """The project's `tog_search` block (defaults where absent) with `overrides` on top.

    Raises `InputError` naming the file and the offending key.
    """
    block, source = _read_block(Path(root))
    block, said = _fork_shape(block, source)
    _say_fork(source, said)
    data = _merge(block, _fork_shape(overrides or {}, source)[0])
    try:
        return ToGSettings.model_validate(data)
    except ValidationError as exc:
        raise _invalid(source, exc) from None

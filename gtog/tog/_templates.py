"""ToG prompt templates: the built-in files, project overrides, and `$name` rendering."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gtog._errors import InputError
from gtog._prompts import render_prompt
from gtog.compat._paths import portable_path
from gtog.tog._settings import SETTINGS_FILES, ToGSettings

__all__ = [
    "PROMPT_NAMES",
    "ToGPrompts",
    "add_tog_to_project",
    "default_prompt",
    "load_prompts",
    "project_prompt_file",
    "tog_settings_block",
    "write_default_prompts",
]

PROMPT_NAMES = (
    "entity_linking",
    "relation_pruning",
    "entity_pruning",
    "edge_pruning",
    "reasoning",
    "answer",
)
"""One prompt per ToG stage (also the usage categories); `edge_pruning` serves the
`pruning: edges` and `text_guided` variants, the two before it the paper's."""


_FORK_NAMES = {
    "query": "question",
    "entity_name": "entity",
    "current_path": "path",
    "exploration_paths": "evidence",
}
"""The graphrag fork's placeholder -> the value gtog passes under its own name."""


def default_prompt(name: str) -> str:
    """The built-in prompt text of stage `name`."""
    if name not in PROMPT_NAMES:
        raise KeyError(name)
    return resources.files("gtog.tog").joinpath("prompts", f"{name}.txt").read_text("utf-8")


def project_prompt_file(name: str) -> str:
    """Where `gtog init` writes stage `name`'s prompt, relative to the project root."""
    return f"prompts/tog_{name}.txt"


@dataclass(frozen=True)
class ToGPrompts:
    """The stage templates; placeholders are `$question`, `$evidence`, ...."""

    entity_linking: str
    relation_pruning: str
    entity_pruning: str
    edge_pruning: str
    reasoning: str
    answer: str

    def render(self, name: str, **values: object) -> str:
        """Stage `name`'s prompt with `values` substituted (unknown `$words` left as is).

        The graphrag fork's placeholders are filled too (`{query}`, `{entity_name}`,
        `{relations}`, `{candidate_entities}`, `{current_path}`, `{exploration_paths}`), so
        its prompt files work as they are (`tog_search.relation_scoring_prompt`, ...).
        """
        aliases = {new: values[old] for new, old in _FORK_NAMES.items() if old in values}
        if "candidates" in values:
            aliases["relations" if name == "relation_pruning" else "candidate_entities"] = values[
                "candidates"
            ]
        return render_prompt(getattr(self, name), {**aliases, **values})


def load_prompts(settings: ToGSettings, root: Path | None = None) -> ToGPrompts:
    """Built-in prompts, replaced by the files `settings.prompts` names (relative to `root`)."""
    texts: dict[str, str] = {}
    for name in PROMPT_NAMES:
        path_str = getattr(settings.prompts, name)
        if path_str is None:
            texts[name] = default_prompt(name)
            continue
        path = Path(portable_path(path_str))  # (`prompts\\tog_answer.txt` written on Windows)
        if not path.is_absolute():
            path = (root or Path.cwd()) / path
        if not path.is_file():
            raise InputError(f"tog_search.prompts.{name}: prompt file {path} not found")
        texts[name] = path.read_text(encoding="utf-8")
    return ToGPrompts(**texts)


def write_default_prompts(root: Path, *, force: bool = False) -> list[Path]:
    """Write the built-in prompts to `<root>/prompts/tog_<stage>.txt`; return the files written."""
    written = []
    for name in PROMPT_NAMES:
        path = Path(root) / project_prompt_file(name)
        if path.exists() and not force:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(default_prompt(name), encoding="utf-8")
        written.append(path)
    return written


def tog_settings_block() -> str:
    """The default `tog_search:` YAML block, prompt paths pointing at `prompts/tog_*.txt`."""
    d = ToGSettings()
    prompts = "\n".join(f"    {n}: {project_prompt_file(n)}" for n in PROMPT_NAMES)
    return f"""
tog_search:  # Think-on-Graph (gtog query --method tog); paper defaults
  width: {d.width}  # beam width N
  depth: {d.depth}  # max depth D; at most 2*N*D + D + 1 LLM calls per question
  temperature_exploration: {d.temperature_exploration}
  temperature_reasoning: {d.temperature_reasoning}
  max_candidates: {d.max_candidates}  # edges per entity shown to the LLM, highest weight first
  use_text_units: {str(d.use_text_units).lower()}  # add cited text units to the answer evidence
  max_text_units: {d.max_text_units}
  pruning: {d.pruning}  # paper | edges: one edge-scoring call per path, at most N*D + D + 1 calls
  text_guided: {str(d.text_guided).lower()}  # true: entities pruned by text units; 2*D + 1 calls
  response_type: {d.response_type}
  # completion_model_id: default_completion_model  # default: local_search's model
  # embedding_model_id: default_embedding_model    # default: local_search's model
  prompts:
{prompts}
"""


def add_tog_to_project(root: Path, *, force: bool = False) -> list[Path]:
    """Write the ToG prompts into `<root>/prompts/` and append the block to settings.yaml."""
    written = write_default_prompts(root, force=force)
    for name in SETTINGS_FILES:
        path = Path(root) / name
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if "\ntog_search:" not in f"\n{text}":
                path.write_text(text.rstrip("\n") + "\n" + tog_settings_block(), encoding="utf-8")
            break
    return written

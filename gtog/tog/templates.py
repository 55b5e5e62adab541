"""ToG prompt templates: the built-in files, project overrides, and `$name` rendering."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gtog.errors import InputError
from gtog.prompts import render_prompt
from gtog.tog.settings import ToGSettings

__all__ = [
    "PROMPT_NAMES",
    "ToGPrompts",
    "default_prompt",
    "load_prompts",
    "project_prompt_file",
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
        """Stage `name`'s prompt with `values` substituted (unknown `$words` left as is)."""
        return render_prompt(getattr(self, name), values)


def load_prompts(settings: ToGSettings, root: Path | None = None) -> ToGPrompts:
    """Built-in prompts, replaced by the files `settings.prompts` names (relative to `root`)."""
    texts: dict[str, str] = {}
    for name in PROMPT_NAMES:
        path_str = getattr(settings.prompts, name)
        if path_str is None:
            texts[name] = default_prompt(name)
            continue
        path = Path(path_str)
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

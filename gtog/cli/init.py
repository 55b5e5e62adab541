"""`gtog init`: graphrag's project init, plus the ToG prompts and a `tog_search` block."""

from __future__ import annotations

import inspect
from pathlib import Path

import typer

from gtog.tog.settings import SETTINGS_FILES, ToGSettings
from gtog.tog.templates import PROMPT_NAMES, project_prompt_file, write_default_prompts

__all__ = ["add_tog_to_project", "register", "tog_settings_block"]


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


def register(app: typer.Typer) -> None:
    """Wrap `app`'s `init` command so that it also sets up ToG."""
    original = next(
        c
        for c in app.registered_commands
        if (c.name or (c.callback.__name__ if c.callback else "")) == "init"
    )
    graphrag_init = original.callback
    if graphrag_init is None or getattr(graphrag_init, "_gtog", False):
        return

    def _init(**kwargs: object) -> None:
        graphrag_init(**kwargs)
        add_tog_to_project(Path(str(kwargs["root"])), force=bool(kwargs.get("force")))

    _init.__signature__ = inspect.signature(graphrag_init)  # type: ignore[attr-defined]
    _init.__doc__ = "Generate a default configuration file and the Think-on-Graph prompts."
    _init._gtog = True  # type: ignore[attr-defined]
    original.callback = _init

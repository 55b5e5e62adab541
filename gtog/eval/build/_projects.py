"""Make a key's graphrag project: settings from a template project or `gtog init`'s defaults,
and its documents in the input folder. Nothing the user put there is overwritten; a copy gtog
made (recorded in the project's `COPIES` file) whose source has changed since is copied
again (only keys not built are made)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from gtog._files import write_atomic, write_json_atomic
from gtog._project import SETTINGS_FILES, settings_file
from gtog.eval.build._plan import COPIES, KeyPlan, raw_settings, recorded_copies

__all__ = ["TEMPLATE_PARTS", "init_defaults", "make_project"]

TEMPLATE_PARTS = (*SETTINGS_FILES, "prompts", ".env")
"""What a project takes from the template (the first settings file found)."""


def _from_template(template: Path, project: Path) -> None:
    settings = settings_file(template)
    assert settings is not None  # checked when planning
    shutil.copy2(settings, project / settings.name)
    if (template / "prompts").is_dir():
        shutil.copytree(template / "prompts", project / "prompts", dirs_exist_ok=True)
    if (template / ".env").is_file() and not (project / ".env").exists():
        shutil.copy2(template / ".env", project / ".env")


def init_defaults(project: Path) -> None:
    """graphrag's `init` (its default models) plus the ToG prompts and block, as `gtog init`."""
    from graphrag.cli.initialize import initialize_project_at
    from graphrag.config.defaults import DEFAULT_COMPLETION_MODEL, DEFAULT_EMBEDDING_MODEL

    from gtog.tog._templates import add_tog_to_project

    initialize_project_at(
        project,
        force=False,
        model=DEFAULT_COMPLETION_MODEL,
        embedding_model=DEFAULT_EMBEDDING_MODEL,
    )
    add_tog_to_project(project)


def make_project(plan: KeyPlan) -> list[Path]:
    """Create `plan.project` if it has no settings file, and copy its documents into its
    input folder: a file already there is kept unless it is gtog's copy of an older version
    of its source. Returns the documents copied."""
    project = plan.project
    if settings_file(project) is None:
        project.mkdir(parents=True, exist_ok=True)
        if plan.template is not None:
            _from_template(plan.template, project)
        else:
            init_defaults(project)
    block = raw_settings(project).get("input_storage") or {}
    base = Path(str(block.get("base_dir") or "input")) if isinstance(block, dict) else Path("input")
    folder = base if base.is_absolute() else project / base
    folder.mkdir(parents=True, exist_ok=True)
    copies = recorded_copies(project)
    copied = []
    for doc in plan.documents:
        target = folder / doc.name
        data = doc.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        entry = copies.get(str(target))
        if target.exists():
            here = hashlib.sha256(target.read_bytes()).hexdigest()
            ours = entry is not None and entry.get("sha256") == here
            if here == digest or not ours:
                if here == digest and entry is None:
                    copies[str(target)] = {"source": str(doc), "sha256": digest}
                continue  # the same text, or the user's file (or edited since): kept
        write_atomic(target, data)
        shutil.copystat(doc, target)
        copies[str(target)] = {"source": str(doc), "sha256": digest}
        copied.append(target)
    if copies != recorded_copies(project):
        write_json_atomic(project / COPIES, copies)
    return copied

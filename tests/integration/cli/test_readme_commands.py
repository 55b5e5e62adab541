"""Every `gtog` command the README and the documentation site show runs as written from the
clone's root.

The commands are read from the bash blocks of README.md and docs/**/*.md (a cluster job
script, with its variables, is left out) and from the `- run: gtog ...` steps of a CI
workflow a page shows. Each must name real commands, options and input files; those that
need no model run for real, in a copy of the clone's example, after a scripted-model run
has written the results they read.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from gtog.cli import cli
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").rglob("*.md"))]
"""The README and every page of the documentation site."""
MADE_BY_EARLIER_COMMANDS = tuple(
    Path(p) for p in ("eval/results", "eval/pr", "eval/results-before", "eval/baseline")
)
"""Runs' output folders, not in a clone: written by the pages' `gtog eval` commands
(eval/results, eval/pr), or an earlier run kept to compare with (eval/results-before,
eval/baseline)."""
OUTPUT_OPTIONS = {"output", "out", "aggregates", "json_out"}
PATH_NAMES = {"root", "config", "input", "reference", "responses", "output_dir", "dirs"}


def page_commands(page: Path, *, new_folder: bool = False) -> list[list[str]]:
    """The argument lists of `page`'s `gtog ...` commands, in order: those run in the
    clone, or (`new_folder`) those of a block that starts by making a new folder (a study
    of one's own: its paths are made by its own commands; see test_own_document.py)."""
    text = page.read_text(encoding="utf-8")
    lines = [
        line
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        if not block.startswith("#!")  # a job script for a cluster, with its variables
        and block.startswith("mkdir ") == new_folder
        for line in block.replace("\\\n", " ").splitlines()
    ]
    if not new_folder:
        lines += re.findall(r"- run: (gtog .*)", text)  # a CI workflow's steps
    commands = []
    for line in lines:
        for part in line.split("&&"):
            if part.split()[:1] != ["gtog"]:  # another program (its quotes may span lines)
                continue
            commands.append(shlex.split(part, comments=True)[1:])
    return commands


def readme_commands() -> list[list[str]]:
    """The argument lists of the README's `gtog ...` commands, in order."""
    return page_commands(README)


def doc_commands(*, new_folder: bool = False) -> list[list[str]]:
    """Every page's commands (README first), each once."""
    commands: list[list[str]] = []
    for page in PAGES:
        commands += [c for c in page_commands(page, new_folder=new_folder) if c not in commands]
    return commands


COMMANDS = doc_commands()
NEW_FOLDER_COMMANDS = doc_commands(new_folder=True)


def needs_no_model(args: list[str]) -> bool:
    """`eval report`, `eval merge`, `eval diff`, `eval --plan` and `qa-eval` without a config
    call no model."""
    return (
        args[:2] in (["eval", "report"], ["eval", "merge"], ["eval", "diff"])
        or (args[:1] == ["eval"] and "--plan" in args)
        or (args[:1] == ["qa-eval"] and "--config" not in args)
    )


def parsed(args: list[str]) -> list[Any]:
    """Parse `args` as the CLI does, down to the command that runs (nothing is invoked)."""
    contexts = [cli.make_context("gtog", list(args))]
    command: Any = cli
    while hasattr(command, "get_command"):  # a group (typer's click or click's)
        rest = [*contexts[-1]._protected_args, *contexts[-1].args]
        if not rest:
            break
        sub = command.get_command(contexts[-1], rest[0])
        assert sub is not None, f"gtog {' '.join(args)}: no command {rest[0]!r}"
        contexts.append(sub.make_context(rest[0], rest[1:], parent=contexts[-1]))
        command = sub
    return contexts


def test_commands_are_parsed_down_to_the_one_that_runs() -> None:
    contexts = parsed(["eval", "report", "eval/results"])
    assert [c.info_name for c in contexts] == ["gtog", "eval", "report"]
    assert contexts[-1].params["output_dir"] == Path("eval/results")
    with pytest.raises(Exception, match="No such option"):
        parsed(["eval", "--no-such-flag"])


@pytest.mark.parametrize("args", NEW_FOLDER_COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_each_new_folder_command_names_real_options(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new study's commands parse, in a folder where the earlier ones made `--root`."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / args[args.index("--root") + 1]).mkdir(exist_ok=True)
    assert parsed(args)[-1].command is not None


def test_pages_are_read_for_their_commands() -> None:
    assert {"getting-started.md", "why.md", "ci-gate.md", "sharding.md"} <= {p.name for p in PAGES}
    gate = page_commands(REPO / "docs" / "howto" / "ci-gate.md")
    assert ["eval", "report", "eval/pr", "--baseline", "eval/baseline"] in gate  # a `run:` step
    assert not any("SLURM" in " ".join(c) for c in COMMANDS)  # the job script is left out


def test_the_readme_has_the_commands_it_shows() -> None:
    assert ["eval", "--root", ".", "--local", "--limit", "3"] in readme_commands()  # first screen
    assert len(COMMANDS) >= 12
    assert sum(needs_no_model(c) for c in COMMANDS) >= 3
    assert not any("./gtog" in " ".join(c) for c in COMMANDS)  # the package, not a study


def test_the_docs_show_each_command_of_a_study() -> None:
    shown = {" ".join(c[:2]) for c in COMMANDS}
    assert {"eval diff", "eval report", "eval merge", "query --root"} <= shown
    assert "qa-eval --reference" in shown
    for flag in ("--fail-under", "--fail-on-regression", "--baseline", "--explain", "--shard"):
        assert any(flag in c for c in COMMANDS), flag
    for flag in ("--resume", "--rescore", "--skip-judges"):
        assert any(flag in c for c in COMMANDS), flag


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a)[:60])
def test_each_documented_command_names_real_options_and_files(
    args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    command = " ".join(args)
    inputs: dict[str, Path] = {}
    for ctx in parsed(args):
        for name, value in ctx.params.items():
            values = value if isinstance(value, list | tuple) else [value]
            for v in values:
                path_like = isinstance(v, Path) or (isinstance(v, str) and name in PATH_NAMES)
                if not path_like or name in OUTPUT_OPTIONS:
                    continue
                inputs.setdefault(name, Path(v))
                if any(Path(v).is_relative_to(made) for made in MADE_BY_EARLIER_COMMANDS):
                    continue
                assert Path(v).exists(), f"gtog {command}: {name} {v} not in the clone"
    root = inputs.get("root")
    if args[:1] == ["eval"] and not needs_no_model(args):  # what --root must hold
        assert (inputs.get("config") or root / "eval_config.yaml").is_file(), command
    if args[:1] == ["query"]:
        assert root is not None and (root / "settings.yaml").is_file(), command


def _clone_example(dest: Path) -> Path:
    """The clone's files the pages' commands read, in `dest`."""
    shutil.copy(REPO / "eval_config.yaml", dest)
    shutil.copytree(REPO / "eval", dest / "eval", ignore=shutil.ignore_patterns("results"))
    shutil.copytree(REPO / "tests" / "fixtures" / "qa", dest / "tests" / "fixtures" / "qa")
    return dest


def test_documented_commands_that_need_no_model_run_as_written(
    llm_server: ScriptedServer,
    example_indexes: dict[str, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clone = _clone_example(tmp_path)
    monkeypatch.chdir(clone)
    # what the pages' model commands write, made with the scripted model instead
    scripted = clone / "scripted.yaml"
    scripted.write_text(
        (clone / "eval_config.yaml")
        .read_text()
        .replace("eval/indexes/lighthouse", str(example_indexes["lighthouse"]))
        .replace("eval/indexes/orchard", str(example_indexes["orchard"]))
        .replace("prompts_dir: builtin:local", "")
    )
    base = ["eval", "--root", ".", "--config", str(scripted), "--limit", "1", "-m", "local", "-q"]
    for extra in ([], *(["--shard", f"{i}/4"] for i in range(4))):
        made = gtog(*base, *extra)
        assert made.returncode == 0, made.stderr
    for run in MADE_BY_EARLIER_COMMANDS[1:]:  # the CI job's run and the runs compared with
        shutil.copytree(clone / "eval" / "results", clone / run)

    ran = 0
    for args in COMMANDS:
        if not needs_no_model(args):
            continue
        result = gtog(*args)
        assert result.returncode == 0, f"gtog {' '.join(args)}: {result.stderr}"
        ran += 1
    assert ran >= 5
    assert (clone / "eval" / "results" / "report.html").exists()
    assert (clone / "eval" / "merged" / "eval_results_summary.json").exists()
    assert (clone / "eval" / "results" / "qa.yaml").exists()
    assert (clone / "eval" / "diff.json").exists()

"""Bad input: a one-line error naming the file and field, exit code 2, nothing overwritten."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gtog.cli import app
from tests.integration.eval.helpers import make_eval_root

pytestmark = pytest.mark.integration

SENTINEL = '{"by_method": "results of an earlier run"}\n'


@pytest.fixture
def root(example_indexes: dict[str, Path], tmp_path: Path) -> Path:
    """An eval root whose output folder already holds a summary from an earlier run."""
    r = make_eval_root(tmp_path, example_indexes)
    (r / "results").mkdir()
    (r / "results" / "eval_results_summary.json").write_text(SENTINEL)
    return r


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["eval", *args])
    return result.exit_code, result.output


def set_config(root: Path, old: str, new: str) -> None:
    path = root / "eval_config.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def no_args(*_: object) -> list[str]:
    """Case setups that only change files pass no extra flags."""
    return []


def copy_index(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


CASES: dict[str, tuple[Callable[[Path], list[str]], list[str]]] = {
    "missing config": (lambda r: ["--config", str(r / "nope.yaml")], ["nope.yaml", "not found"]),
    "malformed config": (
        lambda r: no_args((r / "eval_config.yaml").write_text("dataset: [oops\n")),
        ["eval_config.yaml", "malformed YAML", "line"],
    ),
    "unknown config key": (
        lambda r: no_args(set_config(r, "concurrency: 4", "concurency: 4")),
        ["eval_config.yaml", "unknown key 'concurency'"],
    ),
    "wrong type": (
        lambda r: no_args(set_config(r, "concurrency: 4", "concurrency: many")),
        ["eval_config.yaml", "concurrency"],
    ),
    "missing dataset": (
        lambda r: no_args((r / "qa.json").unlink()),
        ["qa.json", "dataset not found"],
    ),
    "malformed dataset": (
        lambda r: no_args((r / "qa.json").write_text('[{"imdb_key": "x",')),
        ["qa.json", "malformed JSON", "line 1"],
    ),
    "wrong dataset field": (
        lambda r: no_args((r / "qa.json").write_text('[{"imdb_key": "x", "question": "Q"}]')),
        ["qa.json", "neither dataset shape fits"],
    ),
    "index key not in indexes": (
        lambda r: no_args(set_config(r, "  orchard:", "  garden:")),
        ["qa.json", "'orchard'", "indexes"],
    ),
    "unknown --imdb-key": (lambda r: ["--imdb-key", "tt999"], ["--imdb-key", "tt999"]),
    "unknown method flag": (lambda r: ["--methods", "local,psychic"], ["--methods", "psychic"]),
    "unknown method in config": (
        lambda r: no_args(set_config(r, "methods: [local, basic]", "methods: [local, oracle]")),
        ["eval_config.yaml", "methods", "oracle"],
    ),
    "index folder missing": (
        lambda r: no_args(set_config(r, "  orchard: ", f"  orchard: {r}/gone #")),
        ["gone", "index folder not found"],
    ),
    "resume without checkpoint": (
        lambda r: ["--resume"],
        ["eval_checkpoint.jsonl", "no checkpoint"],
    ),
    "results present without --resume": (
        lambda r: [],
        ["already holds results", "--resume", "--force"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_one_line_exit_2_and_keeps_results(root: Path, case: str) -> None:
    make_args, needles = CASES[case]
    args = make_args(root)
    code, output = run("--root", str(root), *args)
    assert code == 2, output
    message = output.strip()
    assert message.startswith("error:") and "\n" not in message, message
    for needle in needles:
        assert needle in message, (needle, message)
    assert "Traceback" not in output
    assert (root / "results" / "eval_results_summary.json").read_text() == SENTINEL
    assert not (root / "results" / "eval_checkpoint.jsonl").exists()


def test_index_folder_without_settings_or_index(
    root: Path, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    bare = copy_index(example_indexes["orchard"], tmp_path / "bare")
    (bare / "settings.yaml").unlink()
    set_config(root, f"  orchard: {example_indexes['orchard']}", f"  orchard: {bare}")
    code, output = run("--root", str(root))
    assert code == 2 and "no settings.yaml" in output and str(bare) in output

    unindexed = copy_index(example_indexes["orchard"], tmp_path / "unindexed")
    (unindexed / "output" / "entities.parquet").unlink()
    set_config(root, f"  orchard: {bare}", f"  orchard: {unindexed}")
    code, output = run("--root", str(root))
    assert code == 2 and "entities.parquet" in output and "gtog index" in output
    assert (root / "results" / "eval_results_summary.json").read_text() == SENTINEL


def test_force_keeps_the_old_results_as_backup(root: Path) -> None:
    code, output = run(
        "--root", str(root), "--force", "-m", "basic", "-k", "orchard", "--limit", "1", "-q"
    )
    assert code == 0, output
    backups = list((root / "results").glob("eval_results_summary.json.*.bak"))
    assert len(backups) == 1 and backups[0].read_text() == SENTINEL

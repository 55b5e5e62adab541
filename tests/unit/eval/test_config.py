from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval.run._config import ALL_METRICS, load_eval_config

GOOD = """
dataset: {path: eval/qa.json}
indexes: {tt1: tt1, tt2: projects/tt2}
methods: [local, basic]
output: {dir: out, save_intermediate: false}
judge: {model: null, temperature: 0.0}
concurrency: 3
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "eval_config.yaml"
    p.write_text(text)
    return p


def test_valid_config_with_defaults(tmp_path: Path) -> None:
    cfg = load_eval_config(write(tmp_path, GOOD))
    assert cfg.indexes == {"tt1": "tt1", "tt2": "projects/tt2"}
    assert cfg.methods == ["local", "basic"]
    assert cfg.output.save_intermediate is False
    assert cfg.judge.model is None and cfg.judge.temperature == 0.0
    assert cfg.concurrency == 3
    assert cfg.metrics == list(ALL_METRICS)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (GOOD + "colour: red\n", "unknown key 'colour'"),
        (
            GOOD.replace("judge: {model: null, temperature: 0.0}", "judge: {temprature: 0}"),
            "unknown key 'judge.temprature'",
        ),
        (GOOD.replace("temperature: 0.0", "temperature: hot"), "judge.temperature"),
        (GOOD.replace("concurrency: 3", "concurrency: 0"), "concurrency"),
        (GOOD.replace("dataset: {path: eval/qa.json}", ""), "missing required key 'dataset'"),
        (GOOD + "metrics: [correctness, vibes]\n", "unknown metric 'vibes'"),
        ("dataset: {path: [unclosed\n", "malformed YAML"),
        ("- just\n- a list\n", "expected a mapping"),
    ],
)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, needle: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InputError) as info:
        load_eval_config(path)
    message = str(info.value)
    assert str(path) in message
    assert needle in message
    assert "\n" not in message


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    path = write(tmp_path, "dataset:\n  path: a\nindexes: {a: [\n")
    with pytest.raises(InputError, match=r"line \d+"):
        load_eval_config(path)


def test_missing_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_eval_config(tmp_path / "nope.yaml")


def test_dataset_files_and_per_method_response_type(tmp_path: Path) -> None:
    text = GOOD.replace(
        "dataset: {path: eval/qa.json}", "dataset: {files: {tt1: eval/tt1/qa.json}}"
    )
    text += "response_type: {tog: Single Sentence, local: Multiple Paragraphs}\n"
    cfg = load_eval_config(write(tmp_path, text))
    assert cfg.dataset.path is None and cfg.dataset.files == {"tt1": "eval/tt1/qa.json"}
    assert cfg.response_type_for("tog") == "Single Sentence"
    assert cfg.response_type_for("local") == "Multiple Paragraphs"
    assert cfg.response_type_for("basic") is None  # engines use the default
    one = load_eval_config(write(tmp_path, GOOD + "response_type: List of 3 items\n"))
    assert one.response_type_for("basic") == "List of 3 items"
    assert load_eval_config(write(tmp_path, GOOD)).response_type_for("tog") is None


def test_dataset_needs_a_path_or_files(tmp_path: Path) -> None:
    path = write(tmp_path, GOOD.replace("dataset: {path: eval/qa.json}", "dataset: {}"))
    with pytest.raises(InputError, match=r"dataset\.path or dataset\.files"):
        load_eval_config(path)


def test_builtin_prompt_set_works_from_any_folder(tmp_path: Path) -> None:
    """`prompts_dir: builtin:local` names gtog's local judge prompts wherever the config is
    copied (a path into the clone, `gtog/local/judge_prompts`, is not a folder elsewhere)."""
    from gtog.eval.run._judging import judge_prompts
    from gtog.eval.scoring import load_prompts

    local = Path(__file__).resolve().parents[3] / "gtog" / "local" / "judge_prompts"
    study = tmp_path / "my-study"
    study.mkdir()
    path = write(study, GOOD.replace("temperature: 0.0}", "prompts_dir: builtin:local}"))
    prompts = judge_prompts(study, load_eval_config(path), path)
    assert prompts.templates == load_prompts(local).templates
    assert prompts.templates != load_prompts(None).templates

    (study / "mine").mkdir()  # a plain folder keeps working, relative to --root
    (study / "mine" / "correctness.txt").write_text("Q {question} R {ground_truth} A {predicted}")
    path = write(study, GOOD.replace("temperature: 0.0}", "prompts_dir: mine}"))
    mine = judge_prompts(study, load_eval_config(path), path)
    assert mine.templates["correctness"].startswith("Q {question}")

    path = write(study, GOOD.replace("temperature: 0.0}", "prompts_dir: builtin:nope}"))
    with pytest.raises(InputError, match=r"judge.prompts_dir builtin:nope: no such built-in"):
        judge_prompts(study, load_eval_config(path), path)

"""`tog_search` settings and prompt files."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.tog._settings import ToGSettings, load_tog_settings
from gtog.tog._templates import PROMPT_NAMES, default_prompt, load_prompts, write_default_prompts


def test_defaults_are_the_papers() -> None:
    s = ToGSettings()
    assert (s.width, s.depth, s.temperature_exploration, s.temperature_reasoning) == (
        3,
        3,
        0.4,
        0.0,
    )
    assert s.max_llm_calls == 2 * 3 * 3 + 3 + 1


def test_block_is_read_from_settings_yaml_and_overridden(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(
        "models: {}\ntog_search:\n  width: 2\n  prompts:\n    answer: prompts/a.txt\n"
    )
    s = load_tog_settings(tmp_path, {"depth": 4, "prompts": {"reasoning": "prompts/r.txt"}})
    assert (s.width, s.depth) == (2, 4)
    assert (s.prompts.answer, s.prompts.reasoning) == ("prompts/a.txt", "prompts/r.txt")


def test_missing_file_or_block_gives_defaults(tmp_path: Path) -> None:
    assert load_tog_settings(tmp_path) == ToGSettings()
    (tmp_path / "settings.yaml").write_text("input: {type: text}\n")
    assert load_tog_settings(tmp_path) == ToGSettings()


@pytest.mark.parametrize(
    ("block", "key"),
    [
        ("tog_search:\n  widht: 2\n", "tog_search.widht"),
        ("tog_search:\n  depth: 0\n", "tog_search.depth"),
        ("tog_search:\n  prompts:\n    answr: x.txt\n", "tog_search.prompts.answr"),
    ],
)
def test_errors_name_the_key(tmp_path: Path, block: str, key: str) -> None:
    (tmp_path / "settings.yaml").write_text(block)
    with pytest.raises(InputError, match=rf"settings\.yaml: {key}:"):
        load_tog_settings(tmp_path)


def test_override_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"tog_search\.max_candidates:"):
        load_tog_settings(tmp_path, {"max_candidates": "many"})


def test_prompt_files_replace_the_built_in_ones(tmp_path: Path) -> None:
    written = write_default_prompts(tmp_path)
    assert sorted(p.name for p in written) == sorted(f"tog_{n}.txt" for n in PROMPT_NAMES)
    assert write_default_prompts(tmp_path) == []
    (tmp_path / "prompts" / "tog_answer.txt").write_text("Say $question in $response_type $x")
    s = ToGSettings.model_validate({"prompts": {"answer": "prompts/tog_answer.txt"}})
    prompts = load_prompts(s, tmp_path)
    assert prompts.render("answer", question="hi", response_type="one line") == (
        "Say hi in one line $x"
    )
    assert prompts.reasoning == default_prompt("reasoning")


def test_missing_prompt_file_is_an_input_error(tmp_path: Path) -> None:
    s = ToGSettings.model_validate({"prompts": {"answer": "nope.txt"}})
    with pytest.raises(InputError, match=r"tog_search\.prompts\.answer"):
        load_prompts(s, tmp_path)


def test_built_in_prompts_have_their_placeholders() -> None:
    needed = {
        "entity_linking": ["$question"],
        "relation_pruning": ["$question", "$path", "$entity", "$candidates", "$width"],
        "entity_pruning": ["$question", "$path", "$entity", "$candidates"],
        "reasoning": ["$question", "$evidence"],
        "answer": ["$question", "$evidence", "$response_type"],
    }
    for name, placeholders in needed.items():
        text = default_prompt(name)
        assert all(p in text for p in placeholders), name

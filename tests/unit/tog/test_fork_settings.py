"""The graphrag fork's `tog_search:` block, and the LLM-free pruning strategies' settings
(issue 46 item 5)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.tog._free import BM25, words
from gtog.tog._pruning import parse_scores
from gtog.tog._settings import _NOTED, ToGSettings, load_tog_settings, spec_settings
from gtog.tog._templates import ToGPrompts, default_prompt, load_prompts

FORK = """\
tog_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  width: 2
  depth: 4
  prune_strategy: {strategy}
  num_retain_entity: 5
  temperature_exploration: 0.3
  temperature_reasoning: 0.1
  max_context_tokens: 8000
  max_exploration_paths: 10
  relation_scoring_prompt: prompts/rel.txt
  entity_scoring_prompt: prompts/ent.txt
  reasoning_prompt: prompts/answer.txt
"""


def _project(root: Path, strategy: str = "llm") -> Path:
    (root / "prompts").mkdir(parents=True)
    (root / "settings.yaml").write_text(FORK.format(strategy=strategy))
    (root / "prompts" / "rel.txt").write_text(
        'Given the question: "{query}"\nCurrently exploring entity: {entity_name}\n'
        "Path: {current_path}\nAvailable relations:\n{relations}\n"
        "Output format: [score1, score2, ...]"
    )
    (root / "prompts" / "ent.txt").write_text(
        "Q={query}\nPath={current_path}\nCandidates:\n{candidate_entities}\n[scores]"
    )
    (root / "prompts" / "answer.txt").write_text(
        "Question: {query}\nExploration Paths:\n{exploration_paths}\nanswer {{briefly}}"
    )
    return root


@pytest.fixture(autouse=True)
def _fresh() -> None:
    _NOTED.clear()


def test_every_fork_key_is_mapped_or_named_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    s = load_tog_settings(root)
    assert s.completion_model_id == "default_chat_model"
    assert s.embedding_model_id == "default_embedding_model"
    assert (s.width, s.depth, s.prune_strategy) == (2, 4, "llm")
    assert (s.temperature_exploration, s.temperature_reasoning) == (0.3, 0.1)
    assert s.prompts.relation_pruning == "prompts/rel.txt"
    assert s.prompts.entity_pruning == "prompts/ent.txt"
    assert s.prompts.answer == "prompts/answer.txt"
    assert s.json_mode is False  # their prompts ask for a bare list of scores
    load_tog_settings(root)
    notes = [x for x in capsys.readouterr().err.splitlines() if "fork's shape" in x]
    assert len(notes) == 1, notes
    for key in ("num_retain_entity", "max_context_tokens", "max_exploration_paths"):
        assert f"{key} not used (" in notes[0]
    assert "chat_model_id -> completion_model_id" in notes[0]


def test_fork_placeholders_are_filled(tmp_path: Path) -> None:
    root = _project(tmp_path)
    prompts = load_prompts(load_tog_settings(root), root)
    text = prompts.render(
        "relation_pruning",
        question="Who keeps the light?",
        path="Varn Island",
        entity="Varn Island",
        candidates="[1] Varn Island -> Maren: keeps (weight 1)",
        width=2,
    )
    assert '"Who keeps the light?"' in text and "exploring entity: Varn Island" in text
    assert "Path: Varn Island" in text and "[1] Varn Island -> Maren" in text
    assert "{" not in text
    text = prompts.render(
        "entity_pruning", question="q?", path="A -> B", entity="B", candidates="[1] C", width=2
    )
    assert text == "Q=q?\nPath=A -> B\nCandidates:\n[1] C\n[scores]"
    text = prompts.render("answer", question="q?", evidence="A -keeps-> B", response_type="x")
    assert "Exploration Paths:\nA -keeps-> B" in text
    # gtog's own prompts are unchanged by the aliases
    own = ToGPrompts(**{n: default_prompt(n) for n in ToGPrompts.__dataclass_fields__})
    assert (
        "$"
        not in own.render(
            "relation_pruning", question="q", path="p", entity="e", candidates="c", width=3
        ).split("Question")[0]
    )


def test_a_list_of_scores_per_candidate_is_read_in_order() -> None:
    assert parse_scores("[8, 3, 6]", "relations", 3) == {0: 0.8, 1: 0.3, 2: 0.6}
    assert parse_scores("Scores: [0.9, 0.1]", "entities", 2) == {0: 0.9, 1: 0.1}
    assert parse_scores("[8, 3]", "relations", 3) is None  # not one per candidate


@pytest.mark.parametrize("strategy", ["semantic", "bm25"])
def test_free_strategies_call_bounds(tmp_path: Path, strategy: str) -> None:
    s = load_tog_settings(_project(tmp_path, strategy))
    assert s.variant == f"paper+{strategy}"
    assert s.stages == ("entity_linking", "reasoning", "answer")
    assert s.max_llm_calls == 4 + 1 and s.call_bound_rule == "D + 1"
    assert s.max_embedding_calls == (1 + 2 * 2 * 4 if strategy == "semantic" else 0)
    spec = spec_settings(s, {})
    assert spec["tog_search"]["prune_strategy"] == strategy
    assert "prune_strategy" not in spec_settings(ToGSettings(), {})["tog_search"]


def test_bad_strategy_values_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"tog_search\.prune_strategy"):
        load_tog_settings(_project(tmp_path, "random"))
    with pytest.raises(InputError, match="pruning: paper"):
        ToGSettings.model_validate({"prune_strategy": "bm25"})  # fine
        load_tog_settings(tmp_path, {"prune_strategy": "bm25", "pruning": "edges"})


def test_bm25_by_hand() -> None:
    docs = {"a": "Maren keeps the lighthouse", "b": "the orchard grows apples", "c": "keeps bees"}
    index = BM25(docs)
    assert words("Who keeps the light?") == ["keeps", "light"]
    n, avg = 3, (3 + 3 + 2) / 3  # 'the' is a stop word
    idf = math.log((n - 2 + 0.5) / (2 + 0.5) + 1)  # 'keeps' is in a and c
    k1, b = 1.5, 0.75
    expected_a = idf * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 3 / avg))
    expected_c = idf * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 2 / avg))
    assert index.score(["keeps"], "a") == pytest.approx(expected_a)
    assert index.score(["keeps"], "c") == pytest.approx(expected_c)
    assert index.score(["keeps"], "b") == 0.0

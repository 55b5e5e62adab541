"""A graphrag 2.x project with the fork-shaped `tog_search:` block answers `--method tog`
with each `prune_strategy` (llm, semantic, bm25); semantic and bm25 make no pruning LLM
call, counted at the scripted server (issue 46 item 5)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gtog._project import load_project
from gtog.search import build_engine
from tests.support.graphrag2 import DEFAULT_INIT, graphrag2_project
from tests.support.projects import gtog
from tests.support.scripted_server import Rule, ScriptedServer
from tests.support.tog_rules import add_tog_rules, candidate_lines

pytestmark = pytest.mark.integration

FORK_BLOCK = """
tog_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
  width: 2
  depth: 2
  prune_strategy: llm
  num_retain_entity: 5
  temperature_exploration: 0.4
  temperature_reasoning: 0.0
  max_context_tokens: 8000
  max_exploration_paths: 10
  relation_scoring_prompt: prompts/tog_relation_scoring.txt
"""

RELATION_PROMPT = """FORK RELATION SCORING
Given the question: "{query}"
Currently exploring entity: {entity_name}
Reasoning path so far: {current_path}

Available relations:
{relations}

Score each relation (1-10) based on how likely it leads to answering the question.
Output format: [score1, score2, score3, ...]
Only output the list of numbers.
"""

QUESTION = "Who keeps the lighthouse on Varn Island?"


def _fork_rule() -> Rule:
    def reply(request) -> str:
        n = len(candidate_lines(request))
        return "[" + ", ".join(str(9 - min(i, 8)) for i in range(n)) + "]"

    return Rule("fork:relations", lambda r: "FORK RELATION SCORING" in r.prompt, reply)


def _count(server: ScriptedServer, *rules: str) -> int:
    return sum(1 for e in server.chat_log() if e.rule in rules)


async def test_each_prune_strategy_answers_and_the_free_ones_ask_no_pruning_call(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    add_tog_rules(llm_server)
    llm_server.rules.insert(0, _fork_rule())
    root = graphrag2_project(
        example_indexes["lighthouse"],
        tmp_path / "p",
        DEFAULT_INIT + FORK_BLOCK,
        llm_server.base_url,
    )
    (root / "prompts" / "tog_relation_scoring.txt").write_text(RELATION_PROMPT)
    project = load_project(root)
    pruning = ("fork:relations", "tog:relation_pruning", "tog:entity_pruning")
    embedded: dict[str, int] = {}
    for strategy in ("llm", "semantic", "bm25"):
        llm_server.clear_log()
        engine = await build_engine("tog", project, {"tog_search": {"prune_strategy": strategy}})
        result = await engine.search(QUESTION)
        status = result.context_data["status"].iloc[0]
        assert result.response and "Maren" in str(result.response), (strategy, result.response)
        assert result.llm_calls == len(llm_server.chat_log()) <= status["llm_call_bound"]
        embedded[strategy] = sum(1 for e in llm_server.log if e.kind == "embeddings")
        if strategy == "llm":
            asked = [e for e in llm_server.chat_log() if e.rule == "fork:relations"]
            assert asked, "the fork's relation prompt was used"
            for e in asked:  # its placeholders filled, its list of scores read
                assert f'question: "{QUESTION}"' in e.prompt
                assert not re.search(r"\{(query|entity_name|current_path|relations)\}", e.prompt)
            assert status["relation_pruning_fallbacks"] == 0
            assert status["variant"] == "paper"
        else:
            assert _count(llm_server, *pruning) == 0, strategy  # no pruning LLM call
            assert status["variant"] == f"paper+{strategy}"
            assert status["llm_call_bound"] == 2 + 1  # D + 1
            assert len(result.context_data["paths"]) > 0  # the graph was walked
    assert embedded["semantic"] > embedded["bm25"]  # semantic embeds its candidates

    # the CLI answers with the file's own block (and names the fork keys it does not use)
    result = gtog("query", "--root", str(root), "--method", "tog", QUESTION)
    assert result.returncode == 0, result.stderr
    assert "Maren" in result.stdout
    assert "num_retain_entity not used" in " ".join(result.stderr.split())

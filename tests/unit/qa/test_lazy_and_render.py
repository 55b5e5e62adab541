"""gtog.qa loads the LLM stack only for LLM metrics; its prompts are filled in one pass."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from gtog.qa._llm_metrics import render_prompt
from tests.support.projects import subprocess_env

FIRST_CALL = Path(__file__).resolve().parents[3] / "benchmarks" / "qa_first_call.py"


def test_a_value_holding_another_placeholder_is_not_filled_again() -> None:
    prompt = render_prompt(
        "answer_correctness",
        question="What is {{reference_answer}}?",
        reference_answer="THE-REFERENCE",
        actual_answer="an answer",
    )
    assert prompt.count("THE-REFERENCE") == 1
    assert "What is {{reference_answer}}?" in prompt


def test_a_sparql_only_evaluation_imports_no_llm_stack() -> None:
    for extra in ({}, {"OPENAI_API_KEY": "sk-test"}):  # default judge models stay unbuilt
        result = subprocess.run(
            [sys.executable, str(FIRST_CALL), "--check"],
            env={**subprocess_env(), **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "litellm loaded: False" in result.stdout, result.stdout
        assert "steps_score 1.0" in result.stdout

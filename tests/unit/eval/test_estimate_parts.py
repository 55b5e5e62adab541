"""The estimate's arithmetic (issue 33): figures, ranges, a search bound's sums, the pilot's
questions and spread, and estimate.json's shape. Hand-computed values."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from graphrag_llm.config import ModelConfig

from gtog.eval.estimate._figures import Figures, Range, priced
from gtog.eval.estimate._pilot import _spread, pilot_questions
from gtog.eval.estimate._plan import Estimate
from gtog.search._bounds import SearchBound, Stage, max_output

MINI = ModelConfig(model_provider="openai", model="gpt-4o-mini", api_key="k")
PRICE_IN, PRICE_OUT = 0.15e-6, 0.6e-6  # gpt-4o-mini, LiteLLM's table


def test_figures_add_scale_and_lose_usd_once_a_price_is_unknown() -> None:
    a = Figures(2, 100, 10, 0.5)
    b = Figures(1, 50, 5, None)
    assert a + a == Figures(4, 200, 20, 1.0)
    assert (a + b).usd is None and (a + b).llm_calls == 3
    assert a.scaled(2.5) == Figures(5, 250, 25, 1.25)
    assert (a - a).as_dict() == {"llm_calls": 0, "prompt_tokens": 0, "output_tokens": 0, "usd": 0.0}
    assert Figures(2.4, 100.6, 0.5, 0.25).as_dict() == {
        "llm_calls": 2,
        "prompt_tokens": 101,
        "output_tokens": 0,
        "usd": 0.25,
    }
    assert Figures.of({"llm_calls": 3, "usd": None}) == Figures(3, 0, 0, None)


def test_priced_counts_embedding_requests_with_the_calls() -> None:
    embed = ModelConfig(model_provider="openai", model="text-embedding-3-small", api_key="k")
    f = priced(MINI, 2, 1000, 100, embed, 1, 20)
    assert (f.llm_calls, f.prompt_tokens, f.output_tokens) == (3, 1020, 100)
    assert f.usd == pytest.approx(1000 * PRICE_IN + 100 * PRICE_OUT + 20 * 0.02e-6)
    unknown = ModelConfig(model_provider="openai", model="no-such-model-xyz", api_key="k")
    assert priced(unknown, 1, 10, 1).usd is None
    own = ModelConfig(
        model_provider="openai",
        model="no-such-model-xyz",
        api_key="k",
        cost_per_1k={"input": 1, "output": 2},
    )
    assert priced(own, 1, 1000, 500).usd == pytest.approx(1.0 + 1.0)


def test_a_search_bound_adds_the_question_to_every_call() -> None:
    bound = SearchBound(
        stages=(
            Stage("explore", (0, 4), (50, 300), (1, 400)),
            Stage("answer", (1, 1), (60, 500), (1, 1000)),
        ),
        chat_model=MINI,
        embeddings=(0, 2),
        embedding_extra=400,
    )
    calls, prompt, output = bound.chat(question=10)
    assert calls == (1, 5)
    assert prompt == (60 + 10, 4 * (300 + 10) + 500 + 10)
    assert output == (1, 4 * 400 + 1000)
    assert bound.embedding(10) == ((0, 2), (0, 2 * (10 + 400)))


def test_max_output_takes_the_call_cap_then_the_models_own() -> None:
    assert max_output(MINI, 123) == 123
    capped = ModelConfig(**{**MINI.model_dump(), "call_args": {"max_tokens": 77}})
    assert max_output(capped) == 77
    assert max_output(MINI) == 16384  # LiteLLM's table for gpt-4o-mini


def _run(qids: list[str]) -> SimpleNamespace:
    return SimpleNamespace(pairs=[(SimpleNamespace(qid=q), m) for q in qids for m in ("a", "b")])


def test_the_pilot_spreads_its_questions_over_the_run() -> None:
    qids = [f"q{i}" for i in range(10)]
    assert pilot_questions(_run(qids), 3) == ["q0", "q4", "q9"]  # 0, 4.5 -> 4, 9
    assert pilot_questions(_run(qids), 1) == ["q5"]
    assert pilot_questions(_run(qids), 4) == ["q0", "q3", "q6", "q9"]
    assert pilot_questions(_run(qids[:2]), 5) == ["q0", "q1"]


def test_the_pilot_spread_is_the_mean_and_the_cheapest_and_dearest() -> None:
    spread = _spread([Figures(2, 10, 1, 0.2), Figures(6, 30, 3, 0.6), Figures(4, 20, 2, 0.1)])
    assert spread is not None
    assert spread.mid == Figures(4, 20, 2, pytest.approx(0.3))
    assert spread.low == Figures(4, 20, 2, 0.1) and spread.high == Figures(6, 30, 3, 0.6)
    assert _spread([]) is None


def test_estimate_json_subtracts_what_is_held_and_keeps_the_names() -> None:
    est = Estimate("pilot")
    est.methods["tog"] = Range(
        Figures(10, 1000, 100, 1.0), Figures(8, 800, 80, 0.8), Figures(14, 1400, 140, 1.4)
    )
    est.judges["correctness"] = Range(Figures(2, 200, 20, 0.2))
    est.pairwise.add(Figures())
    est.cached = Figures(3, 300, 30, 0.3)
    data = est.as_json()
    assert set(data) >= {"basis", "methods", "judges", "pairwise", "cached", "total"}
    assert data["total"] == {
        "llm_calls": 9,
        "prompt_tokens": 900,
        "output_tokens": 90,
        "usd": pytest.approx(0.9),
        "usd_low": pytest.approx(0.8 + 0.2 - 0.3),
        "usd_high": pytest.approx(1.4 + 0.2 - 0.3),
    }
    assert data["run"] == {  # the whole run, the held part included
        "llm_calls": 12,
        "prompt_tokens": 1200,
        "output_tokens": 120,
        "usd": pytest.approx(1.2),
    }
    assert data["methods"]["tog"] == {
        "llm_calls": 10,
        "prompt_tokens": 1000,
        "output_tokens": 100,
        "usd": 1.0,
    }


def test_a_judges_bound_counts_every_prompt_trial_and_second_attempt() -> None:
    from gtog.eval.scoring._judges import asked_bound
    from gtog.search._bounds import MESSAGE_OVERHEAD as O

    # two prompts (assertions) of 100..300 and 50..250 tokens, 3 trials, replies <= 40
    b = asked_bound(SimpleNamespace(config=MINI), [(100, 300), (50, 250)], 3, 40)  # type: ignore[arg-type]
    assert b.calls == (6, 12)
    assert b.prompt == (3 * (100 + 50 + 2 * O), 6 * (300 + 250 + 2 * O))
    assert b.output == (6, 12 * 40)
    assert b.model is MINI and not b.embedding

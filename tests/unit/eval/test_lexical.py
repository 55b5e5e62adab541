import pytest

from gtog.eval.config import EvalConfig
from gtog.eval.lexical import normalize_tokens, token_recall


def test_normalisation_drops_case_punctuation_and_function_words() -> None:
    assert normalize_tokens("The Grey Heron, a cargo-ship!") == ["grey", "heron", "cargo", "ship"]


@pytest.mark.parametrize(
    ("reference", "answer", "expected"),
    [
        ("Maren Holt", "The lighthouse is kept by Maren Holt.", 1.0),
        ("Maren Holt", "maren holt", 1.0),
        ("Maren Holt", "Tobias Holt", 0.5),
        ("Ashby, at the Saturday market", "In Ashby.", 1 / 3),
        ("Maren Holt", "I do not know.", 0.0),
        ("the", "anything", None),
    ],
)
def test_token_recall(reference: str, answer: str, expected: float | None) -> None:
    got = token_recall(reference, answer)
    assert got == (pytest.approx(expected) if expected is not None else None)


def test_config_accepts_lexical_metrics() -> None:
    cfg = EvalConfig.model_validate(
        {
            "dataset": {"path": "x"},
            "indexes": {"a": "a"},
            "metrics": ["correctness", "token_recall"],
        }
    )
    assert cfg.metrics == ["correctness", "token_recall"]

import pytest

from gtog.eval.scoring._judges import (
    ALL_METRICS,
    EXTRA_PROMPTS,
    FIELDS,
    JudgeParseError,
    load_prompts,
    parse_verdict,
    render,
)


@pytest.mark.parametrize(
    ("text", "score", "reason"),
    [
        ('{"score": 1, "reason": "same meaning"}', 1, "same meaning"),
        ('{"reason": "wrong person", "score": 0}', 0, "wrong person"),
        ('```json\n{"score": 1, "reason": "ok"}\n```', 1, "ok"),
        ('Sure! Here is my verdict:\n{"score": "0", "reason": "missing"}\nThanks', 0, "missing"),
        ('{"score": 1.0, "reason": "float one"}', 1, "float one"),
        ("{'score': 1, 'reason': 'single quotes'}", 1, "single quotes"),
        ('{"score": 1, "reason": "unterminated', 1, "unterminated"),
        ('{"reason": "trailing comma", "score": 0,}', 0, "trailing comma"),
        ("Score: 1", 1, None),
    ],
)
def test_parse_good_fenced_and_broken(text: str, score: int, reason: str | None) -> None:
    assert parse_verdict(text) == (score, reason)


@pytest.mark.parametrize(
    "text",
    [
        '{"score": 2, "reason": "out of range"}',
        '{"score": "yes", "reason": "words"}',
        '{"score": true, "reason": "bool"}',
        '{"score": null}',
        '{"verdict": 1}',
        "I think it is right.",
        "",
    ],
)
def test_parse_rejects_wrong_types_and_missing_scores(text: str) -> None:
    with pytest.raises(JudgeParseError):
        parse_verdict(text)


def test_render_fills_placeholders_and_keeps_json_braces() -> None:
    prompts = load_prompts()
    text = render(prompts.templates["correctness"], question="Q?", ground_truth="G", predicted="P")
    assert "Question: Q?" in text and "Ground Truth: G" in text and "Predicted: P" in text
    assert '{"score": 0 or 1, "reason": "brief explanation"}' in text


def test_builtin_prompts_use_the_design_wording() -> None:
    prompts = load_prompts()
    assert set(prompts.templates) == set(ALL_METRICS)  # (the hash of existing runs' prompts)
    assert "judge if the prediction is correct" in prompts.templates["correctness"]
    everything = load_prompts(None, list(EXTRA_PROMPTS))  # each metric's own prompts too
    assert set(everything.templates) == set(FIELDS) | {
        name for prompts_of in EXTRA_PROMPTS.values() for name in prompts_of
    }
    for metric, fields in FIELDS.items():
        for field in fields:
            assert "{" + field + "}" in everything.templates[metric]
    for prompts_of in EXTRA_PROMPTS.values():
        for name, fields in prompts_of.items():
            assert all("{" + f + "}" in everything.templates[name] for f in fields), name


def test_custom_prompt_dir_changes_fingerprint(tmp_path) -> None:
    base = load_prompts()
    (tmp_path / "completeness.txt").write_text("Q: {question}\nA: {answer}\nJSON please")
    custom = load_prompts(tmp_path)
    assert custom.templates["completeness"].startswith("Q: {question}")
    assert custom.fingerprint != base.fingerprint
    (tmp_path / "relevance.txt").write_text("no placeholders")
    with pytest.raises(Exception, match="placeholder"):
        load_prompts(tmp_path)

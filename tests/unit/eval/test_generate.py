"""Question generation's pure parts: sources, evidence, candidates, duplicates, sampling."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gtog._errors import InputError
from gtog.eval.generate._calls import CallCache
from gtog.eval.generate._drafts import (
    Check,
    Drafted,
    Drafts,
    candidates_from,
    check_prompt,
    draft_prompt,
    load_generation_prompts,
    local_model_prompts_dir,
)
from gtog.eval.generate._evidence import locate, sentences
from gtog.eval.generate._selection import near_duplicates, quotas, sample
from gtog.eval.generate._sources import (
    Unit,
    global_sources,
    linked_sources,
    local_sources,
    units_of,
)
from gtog.llm._models import run_sync
from gtog.llm._replies import parse_json_reply

A = Unit("a", "Maren Holt kept the lighthouse. Her brother “Tobias” fished out of Kelport.", "0")
B = Unit("b", "The Grey Heron ran aground.\n\nIlse Dunmore gave Maren a brass compass.", "1")
C = Unit("c", "Edda Lorne mended clocks in Fenwick.", "2")
UNITS = {u.id: u for u in (A, B, C)}


def test_local_sources_are_a_seeded_sample_of_text_units() -> None:
    first = local_sources("k", UNITS, 2, seed=0)
    assert [s.ref for s in first] == [s.ref for s in local_sources("k", UNITS, 2, seed=0)]
    assert len(first) == 2 and len({s.units[0].id for s in first}) == 2
    assert len(local_sources("k", UNITS, 10, seed=0)) == 3  # never more than there are
    orders = {tuple(s.units[0].id for s in local_sources("k", UNITS, 3, seed=n)) for n in range(8)}
    assert len(orders) > 1  # the seed matters


def test_linked_sources_pair_text_units_that_share_an_entity() -> None:
    entities = pd.DataFrame(
        {
            "title": ["MAREN HOLT", "KELPORT", "EDDA LORNE"],
            "description": ["keeper", "town", "clockmaker"],
            "text_unit_ids": [["a", "b"], ["b", "a"], ["c"]],
        }
    )
    sources = linked_sources("k", entities, UNITS, 5, seed=0)
    # one pair (a, b), through two entities: the pair once, then again by the other entity
    assert [tuple(u.id for u in s.units) for s in sources] == [("a", "b"), ("a", "b")]
    assert {s.title for s in sources} == {"MAREN HOLT", "KELPORT"}
    assert len(linked_sources("k", entities, UNITS, 1, seed=0)) == 1


def test_global_sources_take_the_widest_reports_with_their_text_units() -> None:
    reports = pd.DataFrame(
        {
            "community": [0, 1, 2],
            "level": [1, 0, 0],
            "title": ["small", "wide", "narrow"],
            "full_content": ["r0", "r1", "r2"],
            "summary": ["", "", ""],
        }
    )
    communities = pd.DataFrame(
        {"community": [0, 1, 2], "text_unit_ids": [["a"], ["a", "b"], ["c"]]}
    )
    sources = global_sources("k", reports, communities, UNITS, 2)
    assert [s.title for s in sources] == ["wide", "narrow"]
    assert [u.id for u in sources[0].units] == ["a", "b"] and sources[0].report == "r1"


def test_units_of_reads_a_text_units_table() -> None:
    table = pd.DataFrame(
        {"id": ["x", "y"], "human_readable_id": [0, 1], "text": ["Some text.", "  "]}
    )
    assert list(units_of(table)) == ["x"]  # an empty text is no unit
    assert units_of(table)["x"].label == "0"  # the first unit's number, not its 128-char id
    assert units_of(table.drop(columns="human_readable_id"))["x"].label == "x"


def test_evidence_is_found_verbatim_or_as_the_units_own_sentence() -> None:
    assert sentences(B.text) == [
        "The Grey Heron ran aground.",
        "Ilse Dunmore gave Maren a brass compass.",
    ]
    exact = locate('  her brother "Tobias" fished\nout of kelport. ', [A, B])
    assert exact is not None and exact.unit_id == "a"
    loose = locate("Ilse Dunmore gave Maren Holt the brass compass", [A, B])
    assert loose is not None and loose.unit_id == "b"
    assert loose.text == "Ilse Dunmore gave Maren a brass compass."  # the unit's words
    assert locate("A kraken guards the island at night.", [A, B]) is None
    assert locate("ok", [A]) is None


def _draft(**kw: object) -> Drafted:
    base: dict[str, object] = {
        "question": "Who kept the lighthouse?",
        "answer": "Maren Holt.",
        "evidence": ["Maren Holt kept the lighthouse."],
        "assertions": ["Names Maren Holt", "Says she kept it", "Mentions the lighthouse"],
    }
    return Drafted.model_validate({**base, **kw})


def test_candidates_need_assertions_and_evidence_in_the_text_units() -> None:
    (local,) = local_sources("k", {"a": A}, 1, seed=0)
    drafts = Drafts(
        questions=[
            _draft(),
            _draft(assertions=["one", "two"]),
            _draft(evidence=["Nothing like this is written anywhere."]),
            _draft(question=" "),
            _draft(assertions=[f"claim {i}" for i in range(9)]),
            _draft(question="Beyond the count?"),
        ]
    )
    kept, dropped = candidates_from(local, drafts, count=5)
    assert [c.question for c in kept] == ["Who kept the lighthouse?"] * 2
    assert len(kept[1].assertions) == 6
    assert kept[0].evidence[0].unit_id == "a" and kept[0].kind == "local"
    assert [why for why, _ in dropped] == [
        "fewer than 3 assertions",
        "evidence not found in the text units",
        "no question or answer",
    ]


def test_a_linked_candidate_needs_evidence_from_both_text_units() -> None:
    entities = pd.DataFrame(
        {"title": ["MAREN HOLT"], "description": ["d"], "text_unit_ids": [["a", "b"]]}
    )
    (linked,) = linked_sources("k", entities, UNITS, 1, seed=0)
    one = _draft(kind="Bridge")
    both = _draft(
        kind="bridge", evidence=["Maren Holt kept the lighthouse.", "The Grey Heron ran aground."]
    )
    kept, dropped = candidates_from(linked, Drafts(questions=[one, both]), count=3)
    assert dropped == [("evidence not from both text units", "Who kept the lighthouse?")]
    assert len(kept) == 1 and kept[0].linked_kind == "bridge"
    assert {e.unit_id for e in kept[0].evidence} == {"a", "b"}


def test_prompts_carry_the_source_and_custom_prompts_need_their_placeholders(
    tmp_path: Path,
) -> None:
    prompts = load_generation_prompts()
    (local,) = local_sources("k", {"a": A}, 1, seed=0)
    text = draft_prompt(prompts, local, 4)
    assert A.text in text and "Write up to 4 questions" in text
    kept, _ = candidates_from(local, Drafts(questions=[_draft()]), 1)
    assert "- Maren Holt kept the lighthouse." in check_prompt(prompts, kept[0])
    (tmp_path / "check.txt").write_text("Q: {question} A: {answer}")
    with pytest.raises(InputError, match=r"check.txt: prompt lacks placeholder \{evidence\}"):
        load_generation_prompts(tmp_path)
    (tmp_path / "check.txt").write_text("{question} {answer} {evidence}")
    custom = load_generation_prompts(tmp_path)
    assert custom.templates["check"] == "{question} {answer} {evidence}"
    assert custom.fingerprint != prompts.fingerprint
    with pytest.raises(InputError, match="not a folder"):
        load_generation_prompts(tmp_path / "missing")


def test_the_local_models_check_prompt_asks_plain_questions_reason_first() -> None:
    """`gtog eval generate --local`: the built-in check said "not answerable, guessable" to
    every candidate the 1.5B model wrote (benchmarks/documents_to_decision.py)."""
    builtin, local = load_generation_prompts(), load_generation_prompts(local_model_prompts_dir())
    assert local.templates["check"] != builtin.templates["check"]
    for name in ("local", "global", "linked"):
        assert local.templates[name] == builtin.templates[name]
    (source,) = local_sources("k", {"a": A}, 1, seed=0)
    kept, _ = candidates_from(source, Drafts(questions=[_draft()]), 1)
    text = check_prompt(local, kept[0])
    assert text.index("Maren Holt kept the lighthouse.") < text.index("Question: ")
    assert text.index('"reason"') < text.index('"answerable"') < text.index('"guessable"')
    reply = '{"reason": "The evidence names her.", "answerable": 1, "guessable": 0}'
    value, _ = parse_json_reply(reply, Check)
    assert value is not None and (value.answerable, value.guessable) == (1, 0)
    echoed = text.rsplit("Return JSON: ", 1)[1]  # the template's own example is no verdict
    assert parse_json_reply(echoed, Check)[0] is None


def test_a_check_verdict_must_be_stated() -> None:
    value, _ = parse_json_reply('{"answerable": 1, "guessable": 0, "reason": "ok"}', Check)
    assert value is not None and (value.answerable, value.guessable) == (1, 0)
    value, why = parse_json_reply('{"answerable": 0 or 1, "guessable": 0 or 1}', Check)
    assert value is None and why


def test_near_duplicates_keep_the_first_of_each_group() -> None:
    vectors = [[1, 0], [0.99, 0.141], [0, 1], [0.6, 0.8], [1, 0.001]]
    # cos(v1, v0) = 0.99; v3 is 0.6 from v0, 0.8 from v2; v4 ~ v0
    assert near_duplicates(vectors, 0.95) == [None, 0, None, None, 0]
    assert near_duplicates(vectors, 0.5) == [None, 0, None, 0, 0]
    assert near_duplicates([], 0.9) == []


def test_quotas_spread_n_and_sampling_fills_a_short_key_from_the_others() -> None:
    assert quotas(7, ["a", "b", "c"]) == {"a": 3, "b": 2, "c": 2}
    pools = {"a": [1], "b": [10, 11, 12, 13], "c": [20, 21]}
    picked, short = sample(pools, 6, "s")
    assert sum(len(v) for v in picked.values()) == 6 and picked["a"] == [1]
    assert short == {"a": 1, "b": 0, "c": 0}
    assert sample(pools, 6, "s") == (picked, short)  # seeded
    picked, _ = sample(pools, 10, "s")
    assert sum(len(v) for v in picked.values()) == 7  # all there are


def test_the_call_cache_survives_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "q.json.calls.jsonl"
    cache = CallCache(path)
    run_sync(cache.put("k1", {"questions": []}))
    run_sync(cache.put("k2", [0.5, 0.25]))
    with path.open("ab") as f:
        f.write(b'{"key": "k3", "val')  # a run killed mid-line
    again = CallCache(path)
    assert again.get("k1") == {"questions": []} and again.get("k2") == [0.5, 0.25]
    assert again.get("k3") is None and again.hits == 2
    assert [json.loads(x)["key"] for x in path.read_text().splitlines()[:2]] == ["k1", "k2"]


def test_the_kept_calls_are_hidden_from_a_dataset_search(tmp_path: Path) -> None:
    from gtog.eval._dataset import load_dataset
    from gtog.eval.generate._run import CACHE_FOLDER

    item = {"index_key": "k", "type": "local", "question": "Q?", "answer": "A", "context": ["A."]}
    (tmp_path / "questions.json").write_text(json.dumps([item]))
    calls = tmp_path / CACHE_FOLDER / "questions.json.calls.jsonl"
    calls.parent.mkdir()
    calls.write_text('{"key": "a", "value": {"questions": []}}\n{"key": "b", "va')  # torn
    assert [i.question for i in load_dataset(tmp_path, ["k"]).items] == ["Q?"]


def test_generate_never_overwrites_an_existing_file_without_force(tmp_path: Path) -> None:
    """A study's questions.json (the default output) is refused before anything runs."""
    import typer
    from typer.testing import CliRunner

    from gtog.cli._generate import generate_command

    app = typer.Typer()
    app.command("generate")(generate_command)
    app.command("other")(lambda: None)  # two commands: `generate` is a subcommand
    dataset = tmp_path / "questions.json"
    dataset.write_text('[{"question": "Who?", "ground_truth": "Maren"}]')
    result = CliRunner().invoke(app, ["generate", "--root", str(tmp_path), "--n", "1"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert f"{dataset} exists" in text and "--force" in text and ".bak" in text
    assert dataset.read_text() == '[{"question": "Who?", "ground_truth": "Maren"}]'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["questions.json"]

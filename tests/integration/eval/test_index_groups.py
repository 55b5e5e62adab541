"""A run goes index by index: each index is loaded for its questions and released after;
the next index is opened while the last questions of the one before run.

(Memory and time to first answer over 4/40/200 indexes: benchmarks/many_indexes.py.)
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.integration.eval.helpers import load_results, make_eval_root, question_of, run_probe
from tests.support.projects import gtog
from tests.support.scripted_server import ChatRequest, Fail, Rule, ScriptedServer
from tests.support.world import EXAMPLE_QA

pytestmark = pytest.mark.integration

INDEX_OF = {q["question"]: q["imdb_key"] for q in json.loads(EXAMPLE_QA.read_text())}


def _events(log: Path) -> list[tuple[str, str]]:
    """(index, "built" | "released") in the order eval.log says they happened."""
    pattern = re.compile(r"gtog\.eval\.run\.engines: index (\w+): (?:.* )?(built|released)")
    return [m.groups() for m in pattern.finditer(log.read_text())]  # type: ignore[misc]


def test_questions_run_index_by_index_and_each_index_is_released(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, example_indexes)
    result = gtog("eval", "--root", str(root), "--limit", "3", "-j", "1", "-q")
    assert result.returncode == 0, result.stderr
    searched = [
        INDEX_OF[question_of(e)] for e in llm_server.chat_log() if e.rule == "search:answer"
    ]
    assert searched == ["lighthouse"] * 6 + ["orchard"] * 6, searched
    events = _events(root / "results" / "eval.log")
    # orchard is built ahead, while lighthouse's last question runs: before or after
    # lighthouse's release, whichever the build's speed makes first
    assert sorted(events) == [
        ("lighthouse", "built"),
        ("lighthouse", "released"),
        ("orchard", "built"),
        ("orchard", "released"),
    ], events
    assert events[0] == ("lighthouse", "built") and events[-1] == ("orchard", "released")
    _, summary = load_results(root)
    assert sorted(summary["by_movie"]) == ["lighthouse", "orchard"]


def test_an_index_released_after_its_questions_is_not_rebuilt_on_resume(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    refuse = Rule(
        "fail:orchard-basic",
        lambda r: (
            "---Role---" in r.system
            and "-----Entities-----" not in r.system
            and INDEX_OF.get(r.last_user) == "orchard"
        ),
        lambda r: Fail(400, "scripted bad request"),
    )
    llm_server.rules.insert(0, refuse)
    root = make_eval_root(tmp_path, example_indexes)
    args = ("eval", "--root", str(root), "--limit", "2", "-j", "1", "-q")
    first = gtog(*args, "--max-errors", "1")
    assert first.returncode == 1 and "error budget spent" in first.stderr, first.stderr
    log = root / "results" / "eval.log"
    events = _events(log)
    assert sorted(events) == [
        ("lighthouse", "built"),
        ("lighthouse", "released"),
        ("orchard", "built"),
    ], events

    llm_server.rules.remove(refuse)
    llm_server.clear_log()
    resumed = gtog(*args, "--resume", "--retry-errors")
    assert resumed.returncode == 0, resumed.stderr
    later = _events(log)[len(events) :]
    assert later == [("orchard", "built"), ("orchard", "released")]  # lighthouse is done
    assert {
        INDEX_OF[question_of(e)] for e in llm_server.chat_log() if e.rule == "search:answer"
    } == {"orchard"}
    detailed, summary = load_results(root)
    entries = [e for q in detailed["results"] for e in q["methods"].values()]
    assert len(entries) == 8 and all(e.get("error") is None for e in entries)
    assert summary["by_movie"]["lighthouse"] and summary["by_movie"]["orchard"]


def test_the_next_index_is_opened_while_the_last_questions_of_one_run(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """lighthouse's last answer is held at the server until eval.log says orchard is built:
    opened ahead, orchard is built meanwhile; opened only when its first question starts
    (after lighthouse's last), it never would be and the held answer times out."""
    root = make_eval_root(tmp_path, example_indexes)
    log = root / "results" / "eval.log"
    answer = next(r for r in llm_server.rules if r.name == "search:answer")
    seen: list[str] = []

    def held(request: ChatRequest) -> object:
        seen.append(request.last_user)
        if len(seen) == 6:  # lighthouse's sixth and last (3 questions, local and basic)
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                if log.is_file() and re.search(r"index orchard: .* built", log.read_text()):
                    break
                time.sleep(0.02)
            else:
                return Fail(500, "orchard was not built while lighthouse's last answer waited")
        return answer.reply(request)

    hold = Rule("hold:lighthouse-last", answer.match, held)
    llm_server.rules.insert(0, hold)
    try:
        result = gtog("eval", "--root", str(root), "--limit", "3", "-j", "1", "-q")
    finally:
        llm_server.rules.remove(hold)
    assert result.returncode == 0, result.stderr
    assert [INDEX_OF[q] for q in seen] == ["lighthouse"] * 6 + ["orchard"] * 6
    detailed, _ = load_results(root)
    entries = [e for q in detailed["results"] for e in q["methods"].values()]
    assert len(entries) == 12 and all(e.get("error") is None for e in entries), entries
    assert _events(log) == [
        ("lighthouse", "built"),
        ("orchard", "built"),
        ("lighthouse", "released"),
        ("orchard", "released"),
    ]


OPENS = """
import sys, threading
from gtog.cli import main

opened = []  # the table's reads (graphrag's storage reads in a worker thread; the run's
# hash of the index's files, on the main thread, is not one)
sys.addaudithook(
    lambda event, args: opened.append(str(args[0]))
    if event == "open" and str(args[0]).endswith("entities.parquet")
    and threading.current_thread() is not threading.main_thread()
    else None
)
sys.argv = ["gtog", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("entities read:", len(opened))
"""


def test_an_index_s_entity_titles_are_read_with_its_engines_once(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """The routing feature's titles (`linked_entities`) come from the entities table the
    engines' opening reads: once per index, not again by each question starting at once
    (on the event loop, after the engines released the tables)."""
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "4", "-j", "8", "-q"]
    probe, _ = run_probe(OPENS, *args)
    assert "entities read: 1" in probe.stdout, probe.stdout
    detailed, _ = load_results(root)
    linked = [e.get("linked_entities") for q in detailed["results"] for e in q["methods"].values()]
    assert len(linked) == 8 and all(isinstance(n, int) for n in linked), linked


def test_the_first_round_embeds_its_questions_at_once_with_the_check(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """The vector-size check embeds the first round's questions (the first `concurrency`
    pairs) at the same time as its own, and their searches take those embeddings: the run's
    first calls are all in flight together, and no question is embedded twice."""
    root = make_eval_root(tmp_path, example_indexes)
    llm_server.embedding_delay = 0.5  # (each call's reply is far behind all four requests)
    result = gtog(
        "eval",
        "--root",
        str(root),
        "-m",
        "local",
        "-k",
        "lighthouse",
        "--limit",
        "4",
        "-j",
        "4",
        "-q",
    )
    assert result.returncode == 0, result.stderr
    embedded = [e for e in llm_server.log if e.kind == "embeddings"]
    assert len({e.prompt for e in embedded}) == len(embedded) == 4, [e.prompt for e in embedded]
    assert {INDEX_OF[e.prompt] for e in embedded} == {"lighthouse"}
    first = min(e.end for e in embedded)
    assert all(e.start < first for e in embedded), [(e.start, e.end) for e in embedded]
    chats = [e for e in llm_server.log if e.kind == "chat"]
    assert min(e.start for e in chats) >= first

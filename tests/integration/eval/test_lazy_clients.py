"""A command with no model call to make imports no model client (issue 45): a finished run
re-invoked, `eval report`, `eval diff` and `eval --plan` never import LiteLLM, the
providers' clients, graphrag's query engines or lancedb (seconds of imports on 2 cores),
the first two not scipy either (they compute no statistic), and a run that does call
builds its clients when the first call is due, their modules imported before the first
request (not on the event loop, stalling the calls in flight) and with the garbage
collector paused (its full passes over what they build took seconds); the writing's
imports are made while its calls are awaited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.integration.eval.helpers import make_eval_root, run_probe
from tests.support.projects import gtog
from tests.support.scripted_server import ScriptedServer

pytestmark = pytest.mark.integration

HEAVY = (
    *("litellm", "openai", "graphrag_llm.completion", "graphrag.query", "gtog.search._builders"),
    "lancedb",  # the vector sizes are read from the tables' manifests
    "gtog.llm._gate",  # the model-call gate: a graphrag_cache Cache, built with the models
)

PROBE = """
import asyncio, gc, json, sys, threading
from gtog.cli import main

# the clients' big imports (seconds on 2 cores): what graphrag_llm's factories and the
# openai SDK's first requests import (their small lazy imports aside)
BIG = {"litellm", "litellm.main", "graphrag_llm.completion", "graphrag_llm.embedding"}
on_loop = []  # of those, the ones imported by the event loop's thread while it runs
collecting = []  # of those, the ones imported with the garbage collector on
threads = []  # the threads started, by name
start = threading.Thread.start

def started(self):
    threads.append(self.name)
    return start(self)

threading.Thread.start = started

def audit(event, args):
    if event != "import" or not (args[0] in BIG or str(args[0]).startswith("openai")):
        return
    if gc.isenabled():
        collecting.append(args[0])
    if threading.current_thread() is threading.main_thread():
        if asyncio._get_running_loop() is not None:
            on_loop.append(args[0])

sys.addaudithook(audit)
argvs = json.loads(sys.argv[1])
for n, argv in enumerate(argvs):
    if n == 2:  # the finished run and its report are done (no statistic computed)
        print("before diff:", json.dumps(sorted(sys.modules)))
    if n == len(argvs) - 1:  # the commands without a model call are done
        print("modules:", json.dumps(sorted(sys.modules)))
        print("threads before:", json.dumps(threads))
    sys.argv = ["gtog", *argv]
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, (argv, exc.code)
print("on the loop:", json.dumps(on_loop))
print("collecting:", json.dumps(collecting))
print("threads:", json.dumps(threads))
"""


def test_commands_without_a_model_call_import_no_model_client(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q"]
    first = gtog(*args)
    assert first.returncode == 0, first.stderr
    out = str(root / "results")
    commands = [args, ["eval", "report", out], ["eval", "diff", out, out]]
    commands.append(["eval", "--root", str(root), "--plan"])
    commands.append([*args, "-o", str(root / "fresh")])  # a run that calls

    probe, said = run_probe(PROBE, json.dumps(commands))
    assert "nothing to run" in probe.stderr
    modules = set(json.loads(said["modules"]))
    assert [m for m in HEAVY if m in modules] == []
    # a finished run and the report of one compute no statistic: no scipy (0.5 s) either
    assert [m for m in ("scipy", "scipy.stats") if m in json.loads(said["before diff"])] == []
    on_loop = json.loads(said["on the loop"])
    assert on_loop == [], f"imported on the event loop: {', '.join(on_loop)}"
    # and with the garbage collector paused (gtog._heap: its full passes during the imports)
    assert json.loads(said["collecting"]) == []
    # the statistics' and the report's imports are made while the calls are awaited, by a
    # thread of their own, only in the run that calls
    writers = "gtog-import-writers"
    assert writers not in json.loads(said["threads before"])
    assert writers in json.loads(said["threads"])


ENGINES = (
    "lancedb",
    "graphrag_vectors.lancedb",
    "gtog.search._builders",
    *(f"graphrag.query.structured_search.{m}_search" for m in ("local", "basic", "drift")),
    "graphrag.query.structured_search.global_search",
)

ANSWERS_ONLY = """
import json, os, sys
from gtog.cli import main

spend_writes = []  # spend.json written (its temporary files, renamed into place)
sys.addaudithook(
    lambda event, args: spend_writes.append(1)
    if event == "open" and os.path.basename(str(args[0])).startswith(".spend.json.")
    else None
)
sys.argv = ["gtog", *json.loads(sys.argv[1])]
try:
    main()
finally:
    print("modules:", json.dumps(sorted(sys.modules)))
    print("spend writes: [" + str(len(spend_writes)) + "]")
"""


def test_a_head_to_head_run_of_answers_files_builds_no_engine(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """Answers made by other systems, judged head to head (issue 45's run against
    BenchmarkQED): no index is searched, so no engine, vector store or search is imported."""
    from tests.integration.eval.test_pairwise import PAIRWISE, reading_judge
    from tests.support.scripted_server import Rule

    llm_server.rules[:0] = [Rule("pairwise", lambda r: PAIRWISE in r.prompt, reading_judge)]
    root = make_eval_root(
        tmp_path, {"lighthouse": example_indexes["lighthouse"]}, methods=("mine", "theirs")
    )
    qa = json.loads((root / "qa.json").read_text())
    for name, answer in (("mine", "Maren Holt keeps it."), ("theirs", "I do not know.")):
        lines = [json.dumps({"question_id": q["id"], "answer": answer}) for q in qa]
        (root / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    with (root / "eval_config.yaml").open("a") as f:
        f.write(
            "answers: {mine: mine.jsonl, theirs: theirs.jsonl}\nmetrics: []\n"
            "pairwise: {criteria: [relevance], trials: 1, aa_check: false}\n"
        )
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "2", "-q"]
    _, said = run_probe(ANSWERS_ONLY, json.dumps(args))
    assert len([e for e in llm_server.chat_log() if e.rule == "pairwise"]) == 2 * 2
    modules = set(json.loads(said["modules"]))
    assert "litellm" in modules  # (the judge's client: the run did call)
    assert [m for m in ENGINES if m in modules] == []
    # spend.json is written once at the start, when what was spent changed (at most once
    # per comparison: 2) and at the end, not for each of the 4 answers read from the files
    # (7 writes before)
    [writes] = json.loads(said["spend writes"])
    assert 2 <= writes <= 1 + 2 + 1, writes


BEFORE_CALLS = """
import json, sys, time
from gtog.cli import main

LOCAL = "graphrag.query.structured_search.local_search.search"
imported = {}  # the engines' big modules (by an import statement): when imported

def audit(event, args):
    if event == "import" and args[0] in ("lancedb", LOCAL):
        imported.setdefault(args[0], time.time())

sys.addaudithook(audit)
sys.argv = ["gtog", *json.loads(sys.argv[1])]
try:
    main()
finally:
    print("imported: [" + json.dumps(imported) + "]")
"""


def test_a_calling_run_imports_its_engines_before_its_first_model_call(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """LanceDB and graphrag's engine factories (~1 s on 2 cores) are imported with the
    clients, before the run's first request: not by the first index's opening while the
    first questions' calls wait for it."""
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "1", "-q"]
    llm_server.clear_log()
    _, said = run_probe(BEFORE_CALLS, json.dumps(args))
    [imported] = json.loads(said["imported"])
    first_request = min(e.start or e.time for e in llm_server.log)
    local = "graphrag.query.structured_search.local_search.search"
    assert sorted(imported) == [local, "lancedb"], imported
    late = {m: round(t - first_request, 3) for m, t in imported.items() if t >= first_request}
    assert late == {}, f"imported after the first request (s): {late}"


LAST_ROUND = """
import json, sys, threading
from pathlib import Path
from gtog.cli import main

checkpoint = Path(sys.argv[2])
landed = []  # records in the checkpoint when the writers' imports began

def audit(event, args):
    if event == "import" and threading.current_thread().name == "gtog-import-writers":
        if not landed:
            lines = checkpoint.read_bytes().splitlines()[1:] if checkpoint.is_file() else []
            landed.append(len(lines))

sys.addaudithook(audit)
sys.argv = ["gtog", *json.loads(sys.argv[1])]
try:
    main()
finally:
    print("landed: " + json.dumps(landed))
"""


def test_the_writers_are_imported_during_the_run_s_last_round_only(
    llm_server: ScriptedServer, example_indexes: dict[str, Path], tmp_path: Path
) -> None:
    """The statistics' and the report's imports (a second of CPU) start once what is left
    fits in one round of the concurrency: earlier, they slow every question's calls."""
    root = make_eval_root(tmp_path, {"lighthouse": example_indexes["lighthouse"]})
    args = ["eval", "--root", str(root), "-k", "lighthouse", "--limit", "5", "-j", "2", "-q"]
    checkpoint = root / "results" / "eval_checkpoint.jsonl"
    _, said = run_probe(LAST_ROUND, json.dumps(args), str(checkpoint))
    [landed] = json.loads(said["landed"])  # the 10 pairs (5 questions, local and basic)
    assert landed >= 10 - 2, f"the writers' imports began with {landed} of 10 records in"

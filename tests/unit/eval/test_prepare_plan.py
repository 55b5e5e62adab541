"""`gtog eval prepare`'s plan: what is built, from which documents and settings, at what cost."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog.eval.build._estimate import Shape, estimate, total
from gtog.eval.build._plan import KeyPlan, find_documents, index_gap, plan_keys
from gtog.eval.build._prepare import Preparation, PrepareOptions
from gtog.eval.build._projects import make_project

SHAPE = Shape(
    gleanings=1,
    extract_prompt=1000,
    summarize_prompt=100,
    report_prompt=500,
    summary_max_length=500,
    report_max_length=2000,
    report_max_input=8000,
)


def test_the_estimate_counts_extraction_as_graphrag_calls_it() -> None:
    e = estimate("k", 1, [300, 200], SHAPE, (1e-6, 4e-6, 1e-7))
    # chunk 300: 1300 sent, then the conversation again + a continue message: 1960
    # chunk 200: 1200 + 1860; 2 calls each, 600 + 200 tokens out each
    assert (e.chunks, e.tokens, e.extraction_calls) == (2, 500, 4)
    # 20 entities, 40 records: 12 summaries of (100 + 2 x 60) in, 150 out; 5 reports of
    # (500 + 2000) in, 1000 out
    assert (e.summary_calls, e.report_calls) == (12, 5)
    assert e.prompt_tokens == 6320 + 12 * 220 + 5 * 2500 == 21460
    assert e.output_tokens == 1600 + 12 * 150 + 5 * 1000 == 8400
    assert e.embedding_tokens == 500 + 20 * 60 + 5 * 1000
    assert e.usd == pytest.approx(21460e-6 + 8400 * 4e-6 + 6700e-7)
    assert e.calls == 21


def test_more_gleanings_add_a_loop_check_between_them() -> None:
    two = Shape(**{**SHAPE.__dict__, "gleanings": 2})
    e = estimate("k", 1, [300], two)
    # 1300; then 1960 (continue); 2220 (more?); 2281 (continue): 4 calls
    assert (e.extraction_calls, e.usd) == (4, None)
    none = Shape(**{**SHAPE.__dict__, "gleanings": 0})
    assert estimate("k", 1, [300], none).extraction_calls == 1


def test_a_price_unknown_for_one_key_is_unknown_in_the_total() -> None:
    known = estimate("a", 1, [100], SHAPE, (1e-6, 1e-6, 1e-6))
    unknown = estimate("b", 1, [100], SHAPE)
    assert total([known, known]).usd == pytest.approx(2 * known.usd)  # type: ignore[operator]
    both = total([known, unknown])
    assert both.usd is None and both.extraction_calls == 4


def _project(root: Path, *, tables: tuple[str, ...], finished: float | None = None) -> Path:
    (root / "output").mkdir(parents=True)
    (root / "settings.yaml").write_text("input:\n  type: text\n")
    for t in tables:
        (root / "output" / f"{t}.parquet").write_bytes(b"")
    if finished is not None:
        (root / "output" / "stats.json").write_text(json.dumps({"total_runtime": finished}))
    return root


ALL = ("entities", "relationships", "communities", "community_reports", "text_units")


def test_an_index_is_complete_with_every_table_and_a_finished_run(tmp_path: Path) -> None:
    assert index_gap(tmp_path / "none") == "no project"
    assert index_gap(_project(tmp_path / "a", tables=ALL, finished=12.5)) is None
    assert index_gap(_project(tmp_path / "b", tables=ALL)) is None  # built without stats.json
    gap = index_gap(_project(tmp_path / "c", tables=ALL, finished=0))
    assert gap is not None and gap.startswith("the last build did not finish")
    gap = index_gap(_project(tmp_path / "d", tables=("entities", "text_units"), finished=0))
    assert gap is not None and gap.startswith("no relationships, communities, community_reports")
    assert index_gap(_project(tmp_path / "e", tables=())) == "not indexed"
    v1 = _project(tmp_path / "f", tables=tuple(f"create_final_{t}" for t in ALL))
    assert index_gap(v1) is None  # a graphrag 1.x index


def test_documents_beside_the_qa_file_or_named_in_the_config(tmp_path: Path) -> None:
    data = tmp_path / "eval"
    (data / "tt1").mkdir(parents=True)
    (data / "tt1" / "tt1.txt").write_text("story one")
    (data / "tt1" / "tt1.json").write_text("[]")
    (data / "tt2").mkdir()
    (data / "tt2" / "part1.md").write_text("a")
    (data / "tt2" / "tt2.json").write_text("[]")
    project = tmp_path / "projects" / "tt1"
    assert find_documents("tt1", project, None, data, []) == [data / "tt1" / "tt1.txt"]
    assert find_documents("tt2", tmp_path / "p2", None, data, []) == [data / "tt2" / "part1.md"]
    given = tmp_path / "elsewhere.txt"
    given.write_text("x")
    assert find_documents("tt1", project, given, data, []) == [given]
    with pytest.raises(InputError, match=r"no documents for index 'tt3'.*documents: \{tt3: path\}"):
        find_documents("tt3", tmp_path / "p3", None, data, [])
    (data / "copy").mkdir()
    (data / "copy" / "tt1.txt").write_text("story one again")
    with pytest.raises(InputError, match="several documents for 'tt1'"):
        find_documents("tt1", project, None, data, [])
    assert find_documents("tt1", project, None, data, [data / "copy"]) == [data / "tt1" / "tt1.txt"]
    own = _project(tmp_path / "own", tables=())
    (own / "input").mkdir()
    (own / "input" / "doc.txt").write_text("its own")
    assert find_documents("tt9", own, None, data, []) == []  # the project's own input


def test_the_plan_names_the_config_for_bad_input(tmp_path: Path) -> None:
    config = tmp_path / "eval_config.yaml"
    common = {"documents": {}, "dataset_dir": tmp_path, "config_path": config}
    with pytest.raises(InputError, match=r"eval_config.yaml: indexes_template: .*no settings"):
        plan_keys(tmp_path, {"a": "a"}, ["a"], template="missing", **common)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"eval_config.yaml: documents: 'b' is not a key"):
        plan_keys(
            tmp_path,
            {"a": "a"},
            ["a"],
            template=None,
            documents={"b": "x"},
            dataset_dir=tmp_path,
            config_path=config,
        )
    with pytest.raises(InputError, match=r"eval_config.yaml: no documents for index 'a'"):
        plan_keys(tmp_path, {"a": "a"}, ["a"], template=None, **common)  # type: ignore[arg-type]
    _project(tmp_path / "done", tables=ALL)
    (plan,) = plan_keys(tmp_path, {"d": "done"}, ["d"], template=None, **common)  # type: ignore[arg-type]
    assert plan.gap is None and plan.documents == []  # complete: not built, no documents needed


def test_a_new_project_takes_the_templates_files_and_keeps_what_is_there(tmp_path: Path) -> None:
    template = tmp_path / "template"
    (template / "prompts").mkdir(parents=True)
    (template / "settings.yaml").write_text("input_storage:\n  base_dir: docs\n")
    (template / "prompts" / "extract_graph.txt").write_text("my prompt")
    (template / ".env").write_text("GRAPHRAG_API_KEY=x\n")
    doc = tmp_path / "k.txt"
    doc.write_text("the story")
    (plan,) = plan_keys(
        tmp_path,
        {"k": "projects/k"},
        ["k"],
        template="template",
        documents={"k": str(doc)},
        dataset_dir=None,
        config_path=tmp_path / "eval_config.yaml",
    )
    assert plan.new and plan.settings_from == f"template {template}"
    assert make_project(plan) == [tmp_path / "projects" / "k" / "docs" / "k.txt"]
    project = tmp_path / "projects" / "k"
    assert (project / "prompts" / "extract_graph.txt").read_text() == "my prompt"
    assert (project / ".env").read_text() == "GRAPHRAG_API_KEY=x\n"
    (project / "docs" / "mine.txt").write_text("the user's own")
    assert make_project(plan) == []  # the copy is up to date; the user's file is left alone
    assert (project / "docs" / "mine.txt").read_text() == "the user's own"


def _study(tmp_path: Path, text: str | bytes, settings: str = "") -> tuple[Path, Path]:
    """A dataset folder with `k.txt` beside `k.json`, and eval_config.yaml (no projects)."""
    folder = tmp_path / "eval" / "k"
    folder.mkdir(parents=True)
    doc = folder / "k.txt"
    doc.write_bytes(text.encode() if isinstance(text, str) else text)
    (folder / "k.json").write_text("[]")
    (tmp_path / "template").mkdir()
    (tmp_path / "template" / "settings.yaml").write_text(settings or "input:\n  type: text\n")
    return tmp_path, doc


def _plan(root: Path) -> KeyPlan:
    (plan,) = plan_keys(
        root,
        {"k": "projects/k"},
        ["k"],
        template="template",
        documents={},
        dataset_dir=root / "eval",
        config_path=root / "eval_config.yaml",
    )
    return plan


def test_a_copy_whose_source_changed_is_refreshed_while_the_key_is_not_built(
    tmp_path: Path,
) -> None:
    root, doc = _study(tmp_path, "The first draft of the story.")
    copy = root / "projects" / "k" / "input" / "k.txt"
    assert make_project(_plan(root)) == [copy]
    # the build failed (not indexed); the user fixes the source and prepares again
    doc.write_text("The story, fixed.")
    plan = _plan(root)
    assert plan.gap == "not indexed" and plan.documents == [doc]
    assert make_project(plan) == [copy]
    assert copy.read_text() == "The story, fixed."
    # a copy the user edited in the project is theirs now: kept
    copy.write_text("Edited in the project.")
    doc.write_text("The story, fixed twice.")
    assert make_project(_plan(root)) == [] and copy.read_text() == "Edited in the project."


def test_a_built_key_keeps_its_documents(tmp_path: Path) -> None:
    root, doc = _study(tmp_path, "The story.")
    make_project(_plan(root))
    project = root / "projects" / "k"
    for t in ALL:
        (project / "output").mkdir(exist_ok=True)
        (project / "output" / f"{t}.parquet").write_bytes(b"")
    doc.write_text("A new story.")
    plan = _plan(root)
    assert plan.gap is None and plan.documents == []
    assert (project / "input" / "k.txt").read_text() == "The story."


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty document"),
        (" \n\n\t", "empty document"),
        ("Caf\xe9 au lait".encode("latin-1"), r"not utf-8 text \(byte 0xe9 at offset 3\)"),
    ],
)
def test_an_empty_or_undecodable_document_is_refused_at_plan_time(
    tmp_path: Path, text: str | bytes, says: str
) -> None:
    root, doc = _study(tmp_path, text)
    with pytest.raises(InputError, match=f"^{re.escape(str(doc))}: {says}"):
        _plan(root)
    assert not (root / "projects").exists()


def test_the_inputs_encoding_decides_what_decodes(tmp_path: Path) -> None:
    root, doc = _study(
        tmp_path, "Caf\xe9 au lait".encode("latin-1"), "input:\n  type: text\n  encoding: latin-1\n"
    )
    assert _plan(root).documents == [doc]


def test_the_projects_own_empty_input_file_is_refused_too(tmp_path: Path) -> None:
    own = _project(tmp_path / "own", tables=())
    (own / "input").mkdir()
    (own / "input" / "doc.txt").write_text("a story")
    (own / "input" / "empty.txt").write_text("")
    (own / "input" / "notes.md").write_text("")  # not read by graphrag's text input: no matter
    with pytest.raises(InputError, match=r"empty\.txt: empty document$"):
        plan_keys(
            tmp_path,
            {"o": "own"},
            ["o"],
            template=None,
            documents={},
            dataset_dir=None,
            config_path=tmp_path / "eval_config.yaml",
        )


def test_prepare_names_the_empty_document_on_one_line_and_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gtog.cli._prepare import build_missing

    root, doc = _study(tmp_path, "")
    (root / "eval" / "k" / "other.txt").write_bytes(b"\xff\xfe")
    (root / "eval_config.yaml").write_text(
        "dataset:\n  path: eval\nindexes:\n  k: projects/k\nindexes_template: template\n"
        "documents:\n  k: eval/k\nmethods: [basic]\n"
    )
    assert build_missing(root, yes=True) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"error: {doc}: empty document; also 1 more")
    assert line.endswith("other.txt"), line
    assert not (root / "projects").exists()


def test_local_overrides_add_settings_that_fit_the_local_model(tmp_path: Path) -> None:
    options = PrepareOptions(
        root=tmp_path,
        model_overrides=lambda root: {"chunking": {"encoding_model": "o200k_base"}, "x": 1},
        local=True,
    )
    prep = Preparation(options, tmp_path, tmp_path / "c.yaml", [], [], 1)
    out = prep.overrides(tmp_path)
    assert out is not None and out["x"] == 1
    assert out["chunking"] == {"encoding_model": "o200k_base", "size": 300, "overlap": 30}
    assert out["extract_graph"] == {"max_gleanings": 0} and out["concurrent_requests"] == 1
    assert (
        Preparation(PrepareOptions(root=tmp_path), tmp_path, tmp_path, [], [], 1).overrides(
            tmp_path
        )
        is None
    )


def test_measure_cuts_the_documents_with_graphrags_own_chunker(tmp_path: Path) -> None:
    from gtog._project import load_graphrag_config
    from gtog.eval.build._indexing import measure
    from tests.support.projects import STORIES, write_project

    root = write_project(tmp_path / "p", "lighthouse", "http://127.0.0.1:9/v1")
    config = load_graphrag_config(root)  # chunks of 250 tokens, 20 overlapping; 1 gleaning
    e = measure("lighthouse", config, root, [STORIES / "lighthouse.txt"])
    assert (e.documents, e.chunks, e.extraction_calls) == (1, 2, 4)
    assert 330 < e.tokens < 400  # 350 tokens of text, the overlap counted twice
    assert e.usd is not None and e.usd > 0  # gpt-4o-mini and text-embedding-3-small are priced

"""graphrag 2.x settings files are read as graphrag 3.3's, in memory (issue 46 item 1)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from gtog._errors import InputError
from gtog._project import _NOTED, load_graphrag_config, translated_settings
from gtog.cli._settings import register
from tests.support.graphrag2 import AZURE, DEFAULT_INIT, GEMINI

API = "http://127.0.0.1:9/v1"


def _project(root: Path, text: str, *, name: str = "settings.yaml") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text.replace("{api_base}", API), encoding="utf-8")
    (root / ".env").write_text(
        "GRAPHRAG_API_KEY=sk-dotenv\nAZURE_OPENAI_API_KEY=az-key\nGEMINI_API_KEY=gm-key\n"
    )
    return root


def _dump(root: Path) -> dict:
    config = load_graphrag_config(root)
    return json.loads(config.model_dump_json().replace(str(root.resolve()), "<root>"))


def _migrate(root: Path, *args: str):
    import typer

    app = typer.Typer()
    register(app)
    app.command("_placeholder", hidden=True)(lambda: None)  # keeps `app` a group
    return CliRunner().invoke(app, ["settings", "migrate", "--root", str(root), *args])


@pytest.fixture(autouse=True)
def _fresh_notes(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GRAPHRAG_API_KEY", "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    _NOTED.clear()


@pytest.mark.parametrize("text", [DEFAULT_INIT, AZURE, GEMINI], ids=["init", "azure", "gemini"])
def test_a_2x_file_loads_as_its_migrated_twin_and_is_never_written(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _project(tmp_path / "old", text)
    before = (old / "settings.yaml").read_bytes()
    config = _dump(old)
    _dump(old)  # a second load: no second note
    notes = [line for line in capsys.readouterr().err.splitlines() if "graphrag 2.x" in line]
    assert len(notes) == 1 and notes[0].startswith("note: "), notes
    assert "models.default_chat_model -> completion_models.default_chat_model" in notes[0]

    result = _migrate(old)
    assert result.exit_code == 0, result.output
    written = Path(result.stdout.strip())
    assert written == old / "settings.graphrag3.yaml" and written.is_file()
    assert (old / "settings.yaml").read_bytes() == before  # never over the original
    check = _migrate(old, "--check")
    assert check.exit_code == 0 and check.stdout == written.read_text()
    assert "${" in check.stdout and "sk-dotenv" not in check.stdout  # references kept

    twin = tmp_path / "twin"
    shutil.copytree(old, twin)
    (twin / "settings.yaml").write_text(written.read_text())
    assert translated_settings(twin) is None  # the twin is plain graphrag 3.x
    assert _dump(twin) == config
    assert (old / "settings.yaml").read_bytes() == before
    again = _migrate(old)  # never over an earlier migration either
    assert Path(again.stdout.strip()) == old / "settings.graphrag3-2.yaml"


def test_the_default_init_file_is_translated_key_by_key(tmp_path: Path) -> None:
    config = load_graphrag_config(_project(tmp_path, DEFAULT_INIT))
    chat = config.completion_models["default_chat_model"]
    assert (chat.model_provider, chat.model, chat.api_base) == ("openai", "gpt-4o-mini", API)
    assert chat.api_key == "sk-dotenv"  # ${GRAPHRAG_API_KEY} from the .env beside the file
    assert chat.call_args == {"temperature": 0}  # what 2.x sent with every call
    assert chat.retry is not None and chat.retry.max_retries == 10
    assert chat.rate_limit is None  # tokens/requests_per_minute: null
    emb = config.embedding_models["default_embedding_model"]
    assert emb.model == "text-embedding-3-small" and emb.call_args == {}
    assert config.concurrent_requests == 25
    for block in ("local_search", "global_search", "drift_search", "basic_search"):
        assert getattr(config, block).completion_model_id == "default_chat_model"
    assert config.extract_graph.completion_model_id == "default_chat_model"
    assert config.embed_text.embedding_model_id == "default_embedding_model"
    # `db_uri: output\lancedb` (2.x's default on Windows) is the project's output/lancedb
    assert Path(config.vector_store.db_uri) == (tmp_path / "output" / "lancedb").resolve()
    schema = config.vector_store.index_schema
    assert schema["entity_description"].index_name == "default-entity-description"
    assert schema["text_unit_text"].index_name == "default-text_unit-text"
    assert config.output_storage.base_dir == str((tmp_path / "output").resolve())
    assert config.chunking.size == 1200 and config.input.type == "text"
    assert config.cache.type == "json"


def test_azure_entries_become_litellm_azure_models(tmp_path: Path) -> None:
    read = translated_settings(_project(tmp_path, AZURE))
    assert read is not None
    chat = read.data["completion_models"]["default_chat_model"]
    assert chat["model_provider"] == "azure" and chat["azure_deployment_name"] == "chat-deployment"
    assert chat["api_version"] == "2024-05-01-preview"
    assert chat["rate_limit"] == {
        "type": "sliding_window",
        "period_in_seconds": 60,
        "tokens_per_period": 80000,
        "requests_per_period": 480,
    }
    assert chat["retry"] == {"type": "exponential_backoff", "max_retries": 5, "max_delay": 30}
    note = read.translation.note("s") if read.translation else ""
    assert "retry_strategy (native: 3.3 backs off exponentially)" in note
    config = load_graphrag_config(tmp_path)
    emb = config.embedding_models["default_embedding_model"]
    assert emb.azure_deployment_name == "embedding-deployment" and emb.api_key == "az-key"


def test_gemini_file_with_a_typo_2x_ignored_is_named_not_refused(tmp_path: Path) -> None:
    config = load_graphrag_config(_project(tmp_path, GEMINI))
    chat = config.completion_models["default_chat_model"]
    assert (chat.model_provider, chat.model) == ("gemini", "gemini-2.5-flash")
    assert chat.api_key == "gm-key"
    read = translated_settings(tmp_path)
    assert read is not None and read.translation is not None
    assert read.translation.ignored == ["vector_store.default_vector_store.index_schma"]
    assert "index_schma" in read.translation.note("s")
    assert read.data["tog_search"]["prune_strategy"] == "llm"  # gtog's own block: kept as is
    # the typo's vector_size was never read: the table's own size is used
    assert "vector_size" not in read.data["vector_store"]["index_schema"]["entity_description"]


def test_a_json_2x_file_is_translated_too(tmp_path: Path) -> None:
    data = yaml.safe_load(DEFAULT_INIT.replace("{api_base}", API))
    _project(tmp_path, json.dumps(data), name="settings.json")
    config = load_graphrag_config(tmp_path)
    assert config.local_search.completion_model_id == "default_chat_model"
    result = _migrate(tmp_path)
    assert Path(result.stdout.strip()) == tmp_path / "settings.graphrag3.json"


@pytest.mark.parametrize(
    ("edit", "key", "why"),
    [
        (
            ("    max_retries: 10\n", "    max_retries: 10\n    responses: [a, b]\n"),
            "models.default_chat_model.responses",
            "mock models",
        ),
        (
            ("  max_gleanings: 1\n", "  max_gleanings: 1\n  strategy: {type: x}\n"),
            "extract_graph.strategy",
            "strategy override",
        ),
        (("    type: chat\n", "    type: my_custom_chat\n"), "models.default_chat_model.type", ""),
        (
            ("  file_type: text", "  file_type: text\n  metadata: [title]"),
            "input.metadata",
            "no such input setting",
        ),
    ],
)
def test_a_2x_key_3x_cannot_express_is_one_line_naming_file_line_and_key(
    tmp_path: Path, edit: tuple[str, str], key: str, why: str
) -> None:
    text = DEFAULT_INIT.replace(*edit, 1)
    assert text != DEFAULT_INIT
    _project(tmp_path, text)
    line = 1 + text.replace("{api_base}", API).split("\n").index(
        next(
            x
            for x in text.replace("{api_base}", API).split("\n")
            if x.strip().startswith(key.split(".")[-1] + ":")
            and (key != "models.default_chat_model.type" or "my_custom" in x)
        )
    )
    with pytest.raises(InputError) as info:
        load_graphrag_config(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{(tmp_path / 'settings.yaml').resolve()}, line {line}: {key}: ")
    assert why in message
    result = _migrate(tmp_path, "--check")
    assert result.exit_code == 2 and f"line {line}: {key}" in result.output


def test_a_missing_variable_names_it(tmp_path: Path) -> None:
    _project(tmp_path, DEFAULT_INIT.replace("GRAPHRAG_API_KEY}", "NOT_SET_ANYWHERE}"))
    with pytest.raises(InputError, match="NOT_SET_ANYWHERE"):
        load_graphrag_config(tmp_path)


def test_a_3x_file_is_read_as_it_is(tmp_path: Path) -> None:
    from tests.support.projects import SETTINGS

    (tmp_path / "settings.yaml").write_text(SETTINGS.format(api_base=API, dims=8))
    config = load_graphrag_config(tmp_path)
    assert "default_completion_model" in config.completion_models
    assert translated_settings(tmp_path) is None
    result = _migrate(tmp_path)
    assert result.exit_code == 0 and "nothing to migrate" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.yaml"]


def test_paths_written_on_windows_work_in_a_3x_file_too(tmp_path: Path) -> None:
    from gtog.tog._settings import load_tog_settings
    from gtog.tog._templates import load_prompts
    from tests.support.projects import SETTINGS

    text = SETTINGS.format(api_base=API, dims=8).replace(
        "db_uri: output/lancedb", "db_uri: output\\lancedb"
    )
    text = text.replace('base_dir: "output"', "base_dir: output\\\\run1")
    text += "tog_search:\n  prompts:\n    answer: prompts\\tog_answer.txt\n"
    assert "output\\lancedb" in text and "output\\\\run1" in text
    (tmp_path / "settings.yaml").write_text(text)
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "tog_answer.txt").write_text("ANSWER $question")
    config = load_graphrag_config(tmp_path)
    assert Path(config.vector_store.db_uri) == (tmp_path / "output" / "lancedb").resolve()
    assert config.output_storage.base_dir == str((tmp_path / "output" / "run1").resolve())
    prompts = load_prompts(load_tog_settings(tmp_path), tmp_path)
    assert prompts.answer == "ANSWER $question"


def test_judge_check_reads_a_2x_project_s_judge(tmp_path: Path) -> None:
    """`gtog judge-check` (and `eval`'s judges) with `judge.model: null`: the 2.x project's
    local_search model, its `${VAR}` key from `.env`."""
    from gtog.eval.run._judge_check import load_judges

    _project(tmp_path / "tt0097576", GEMINI)
    (tmp_path / "eval_config.yaml").write_text(
        "dataset: {path: qa.json}\nindexes: {tt0097576: tt0097576}\n"
        "judge: {model: null, temperature: 0.0}\n"
    )
    _, model, _, panel = load_judges(tmp_path)
    assert panel is None
    assert (model.config.model_provider, model.config.model) == ("gemini", "gemini-2.5-flash")
    assert model.config.api_key == "gm-key"

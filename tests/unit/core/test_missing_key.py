"""A model key from an empty environment variable (`GRAPHRAG_API_KEY=`) gives the same one
line as an unset one, naming the variable, the field and the model (issue 44, item 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._project import load_graphrag_config
from tests.support.projects import SETTINGS


@pytest.mark.parametrize(("value", "state"), [(None, "is not set"), ("", "is empty")])
def test_an_empty_key_is_named_like_an_unset_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str | None, state: str
) -> None:
    settings = SETTINGS.format(api_base="http://127.0.0.1:9", dims=64)
    (tmp_path / "settings.yaml").write_text(
        settings.replace("${GTOG_TEST_API_KEY}", "${GRAPHRAG_API_KEY}")
    )
    if value is None:
        monkeypatch.delenv("GRAPHRAG_API_KEY", raising=False)
    else:
        monkeypatch.setenv("GRAPHRAG_API_KEY", value)
    with pytest.raises(InputError) as caught:
        load_graphrag_config(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'settings.yaml'}: completion_models.default_completion_model.api_key: "
        f"${{GRAPHRAG_API_KEY}} {state} (model openai/gpt-4o-mini) (also "
        "embedding_models.default_embedding_model.api_key (openai/text-embedding-3-small)); "
        "set GRAPHRAG_API_KEY in the environment or in the project's .env"
    )
    assert "\n" not in str(caught.value)

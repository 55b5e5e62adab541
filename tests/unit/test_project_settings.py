"""graphrag 2.x settings files get one line saying what to change."""

import json
from pathlib import Path

import pytest

from gtog._errors import InputError
from gtog._project import load_graphrag_config

GRAPHRAG2 = """\
models:
  default_chat_model:
    type: openai_chat
    auth_type: api_key
    api_key: ${GRAPHRAG_API_KEY}
    model: gpt-4o-mini
  default_embedding_model:
    type: openai_embedding
    auth_type: api_key
    api_key: ${GRAPHRAG_API_KEY}
    model: text-embedding-3-small
extract_graph:
  model_id: default_chat_model
local_search:
  chat_model_id: default_chat_model
  embedding_model_id: default_embedding_model
"""


def test_graphrag2_yaml_is_named_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(GRAPHRAG2)
    with pytest.raises(InputError) as info:
        load_graphrag_config(tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{tmp_path / 'settings.yaml'}: this project uses graphrag 2.x")
    assert "move default_chat_model under completion_models:" in message
    assert "move default_embedding_model under embedding_models:" in message
    assert "model_provider" in message and "completion_model_id" in message
    assert "judge.model" not in message


def test_graphrag2_json_settings_too(tmp_path: Path) -> None:
    import yaml

    (tmp_path / "settings.json").write_text(json.dumps(yaml.safe_load(GRAPHRAG2)))
    with pytest.raises(InputError, match=r"graphrag 2\.x settings"):
        load_graphrag_config(tmp_path)


def test_graphrag3_settings_load(tmp_path: Path) -> None:
    from tests.support.projects import SETTINGS

    (tmp_path / "settings.yaml").write_text(SETTINGS.format(api_base="http://x/v1", dims=8))
    config = load_graphrag_config(tmp_path)
    assert "default_completion_model" in config.completion_models

"""The user's own eval folder and eval_config keys keep working (issue 46 item 6): a folder
of per-movie QA files named `<key>/<key>.json` or `<key>/qa_<key>.json`, and
`output.save_intermediate`, `judge.model: null`, `judge.temperature` (the run itself:
tests/integration/eval/test_graphrag2_settings.py)."""

from __future__ import annotations

import json
from pathlib import Path

from gtog.eval._dataset import load_dataset
from gtog.eval.run._config import load_eval_config

USER_CONFIG = """\
dataset:
  path: eval
indexes:
  tt0097576: projects/tt0097576
  tt0443706: projects/tt0443706
methods: [local, basic, tog]
output:
  dir: eval/results
  save_intermediate: false
judge:
  model: null
  temperature: 0.2
"""


def _qa(path: Path, questions: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [
        {"question": q, "ground_truth": f"answer {i}", "context": ""}
        for i, q in enumerate(questions)
    ]
    path.write_text(json.dumps(items))


def test_the_users_config_keys_are_read(tmp_path: Path) -> None:
    (tmp_path / "eval_config.yaml").write_text(USER_CONFIG)
    cfg = load_eval_config(tmp_path / "eval_config.yaml")
    assert cfg.output.save_intermediate is False
    assert cfg.judge.model is None  # each index's local_search model judges
    assert cfg.judge.temperature == 0.2
    assert cfg.dataset.path == "eval"


def test_a_folder_of_per_movie_qa_files_in_both_namings(tmp_path: Path) -> None:
    _qa(tmp_path / "eval" / "tt0097576" / "tt0097576.json", ["Who?", "Where?"])
    _qa(tmp_path / "eval" / "tt0443706" / "qa_tt0443706.json", ["When?"])
    (tmp_path / "eval" / "results").mkdir()  # the run's own output inside the folder
    (tmp_path / "eval" / "results" / "eval_results_detailed.json").write_text("{}")
    data = load_dataset(
        tmp_path / "eval",
        ["tt0097576", "tt0443706"],
        exclude=[tmp_path / "eval" / "results"],
    )
    by_key = {}
    for item in data.items:
        by_key.setdefault(item.index_key, []).append(item.question)
    assert by_key == {"tt0097576": ["Who?", "Where?"], "tt0443706": ["When?"]}

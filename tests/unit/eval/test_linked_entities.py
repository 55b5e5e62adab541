"""The routing feature `linked_entities` reads an index's entities table once per run, however
many questions ask for it at once (issue 45: at concurrency 20 each of the first 20 questions
read the same table)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from graphrag_storage.tables.parquet_table_provider import ParquetTableProvider

from gtog.eval.run._features import linked_entities
from gtog.eval.run._preparation import prepare
from gtog.eval.run._state import EvalOptions

INDEX = Path(__file__).resolve().parents[3] / "eval" / "indexes" / "lighthouse"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    shutil.copytree(INDEX, tmp_path / "lighthouse")
    items = [
        {"id": f"q{n}", "imdb_key": "lighthouse", "question": q, "answer": "x"}
        for n, q in enumerate(["Who is Maren Holt?", "Where is Varn Island?", "Who are you?"] * 8)
    ]
    (tmp_path / "qa.json").write_text(json.dumps(items))
    answers = "".join(json.dumps({"question_id": i["id"], "answer": "y"}) + "\n" for i in items)
    (tmp_path / "mine.jsonl").write_text(answers)
    (tmp_path / "eval_config.yaml").write_text(
        "dataset:\n  path: qa.json\nindexes:\n  lighthouse: lighthouse\n"
        "answers: {mine: mine.jsonl}\nmethods: [mine]\nmetrics: []\n"
    )
    return tmp_path


def test_the_entities_table_is_read_once_for_questions_asking_at_once(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    read = ParquetTableProvider.read_dataframe

    async def counted(self: ParquetTableProvider, name: str):  # type: ignore[no-untyped-def]
        reads.append(name)
        await asyncio.sleep(0.01)  # a read that takes a while: the others ask meanwhile
        return await read(self, name)

    monkeypatch.setattr(ParquetTableProvider, "read_dataframe", counted)

    def counts(concurrently: bool) -> list[int | None]:
        run = prepare(EvalOptions(root=root, output_dir=root / "out", force=True))
        try:

            async def main() -> list[int | None]:
                if concurrently:
                    return list(await asyncio.gather(*(linked_entities(run, q) for q in run.items)))
                return [await linked_entities(run, q) for q in run.items]

            return asyncio.run(main())
        finally:
            run.close()

    one_by_one = counts(concurrently=False)
    assert reads.count("entities") == 1
    reads.clear()
    at_once = counts(concurrently=True)
    assert reads.count("entities") == 1  # 24 reads before
    assert at_once == one_by_one
    assert one_by_one[:3] == [2, 2, 0]  # Maren and Maren Holt; Island and Varn Island; none

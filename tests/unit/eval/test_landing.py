"""Finished records land in batches: one write for all that finished during the last one."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from gtog.eval.results._log import read_checkpoint
from gtog.eval.results._records import MethodRecord
from gtog.eval.results._spec import DatasetSpec, EvalSpec
from gtog.eval.run._checkpoint import Checkpoint
from gtog.eval.run._landing import Lander

SPEC = EvalSpec(dataset=DatasetSpec(path="qa.json", hash="d", questions=1), methods=["local"])


class _Disk:
    """A write that records its batches; the first one waits until `release` is set."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.fail: set[str] = set()

    def write(self, batch: Sequence[str]) -> None:
        self.started.set()
        if not self.batches:
            assert self.release.wait(10)
        self.batches.append(list(batch))
        if self.fail & set(batch):
            raise OSError(28, "No space left on device")


def test_records_finishing_during_a_write_land_together_in_the_next() -> None:
    disk = _Disk()
    lander: Lander[str] = Lander(disk.write)

    async def main() -> list[str]:
        first = asyncio.create_task(lander.land("a"))
        await asyncio.get_running_loop().run_in_executor(None, disk.started.wait, 10)
        rest = [asyncio.create_task(lander.land(r)) for r in ("b", "c", "d")]
        await asyncio.sleep(0)
        assert not first.done() and not any(t.done() for t in rest)  # none is safe yet
        disk.release.set()
        await asyncio.gather(first, *rest)
        return [r for batch in disk.batches for r in batch]

    assert asyncio.run(main()) == ["a", "b", "c", "d"]
    assert disk.batches == [["a"], ["b", "c", "d"]]
    lander.close()


def test_a_failed_write_is_raised_to_each_record_of_its_batch_and_the_next_goes_on() -> None:
    disk = _Disk()
    disk.fail = {"b"}
    lander: Lander[str] = Lander(disk.write)

    async def main() -> list[BaseException | None]:
        first = asyncio.create_task(lander.land("a"))
        await asyncio.get_running_loop().run_in_executor(None, disk.started.wait, 10)
        batch = [asyncio.create_task(lander.land(r)) for r in ("b", "c")]
        await asyncio.sleep(0)
        disk.release.set()
        results = await asyncio.gather(first, *batch, return_exceptions=True)
        await lander.land("e")  # a later batch is written as usual
        return list(results)

    first, b, c = asyncio.run(main())
    assert first is None
    assert isinstance(b, OSError) and isinstance(c, OSError)
    assert disk.batches[-1] == ["e"]
    lander.close()


def test_a_cancelled_waiter_s_record_is_still_written_before_close_returns() -> None:
    disk = _Disk()
    lander: Lander[str] = Lander(disk.write)

    async def main() -> None:
        waiter = asyncio.create_task(lander.land("a"))
        await asyncio.get_running_loop().run_in_executor(None, disk.started.wait, 10)
        waiter.cancel()  # (Ctrl-C while the record is on its way to disk)
        with pytest.raises(asyncio.CancelledError):
            await waiter
        again = asyncio.create_task(lander.land("b"))
        await asyncio.sleep(0)
        again.cancel()

    asyncio.run(main())
    disk.release.set()
    lander.close()
    assert disk.batches == [["a"], ["b"]]


def test_records_appended_together_read_back_as_lines_of_their_own(tmp_path: Path) -> None:
    path = tmp_path / "eval_checkpoint.jsonl"
    cp = Checkpoint.create(path, SPEC)
    records = [
        MethodRecord(qid=q, index_key="a", question="q", reference="r", method="local", response=q)
        for q in ("1", "2", "3")
    ]
    cp.append_many(records[:2])
    cp.append_many([])
    cp.append(records[2])
    cp.close()
    _, read, intact = read_checkpoint(path)
    assert [r.qid for r in read] == ["1", "2", "3"] and intact == path.stat().st_size

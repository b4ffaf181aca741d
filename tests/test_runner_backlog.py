"""A slow disk holds back new calls, not paid answers: no call starts while
``MAX_BACKLOG`` answered records wait for their group commit, so a SIGKILL loses at
most those and the calls in flight (what the resumed run pays again)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from facetlab.records.schema import TrialRecord
from facetlab.runner._writer import MAX_BACKLOG, RecordWriter


def _record(i: int) -> TrialRecord:
    return TrialRecord(
        trial_id=f"t{i}", probe="p1", instance_id="i", n_factors=2, model="simulated/wadd",
        provider="simulated", model_id="wadd", backend="simulated", template="facet-v3",
        prompt=f"prompt {i}", prompt_sha256="0" * 64, status="ok", raw_response="F1",
        started_at="2026-01-01T00:00:00Z", finished_at="2026-01-01T00:00:01Z",
        facetlab_version="0",
    )  # fmt: skip


def test_no_new_call_while_the_backlog_is_full(tmp_path: Path) -> None:
    disk = threading.Event()
    written: list[str] = []

    def slow_write(record: TrialRecord, folder: Path) -> None:
        disk.wait()  # the disk answers only when the test says so
        written.append(record.trial_id)

    async def scenario() -> None:
        writer = RecordWriter(tmp_path, "files", write_file=slow_write)
        futures = [writer.submit(_record(i)) for i in range(MAX_BACKLOG - 1)]
        await asyncio.wait_for(writer.room(), 10)  # one short of the backlog: room
        futures.append(writer.submit(_record(MAX_BACKLOG)))
        room = asyncio.ensure_future(writer.room())
        await asyncio.sleep(0.05)
        assert not room.done()  # a full backlog: the next call waits
        disk.set()
        await asyncio.wait_for(room, 30)
        await asyncio.gather(*futures)
        await writer.close()

    asyncio.run(scenario())
    assert len(written) == MAX_BACKLOG

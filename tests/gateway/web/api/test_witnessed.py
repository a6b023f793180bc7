"""No answer before the witness (issue 25.1): a desk's write is answered only once the
chain head it committed is with the witness; a read waits for nothing."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from gateway.records.witness import Witness
from storage import audit
from storage.audit import AuditChainHead, ChainKeys

from .conftest import Desk


class GatedSink:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.gate = threading.Event()

    def write(self, lines: list[str], at: datetime) -> None:
        self.gate.wait(10)
        self.lines.extend(lines)

    def sync(self) -> None:
        return None

    def close(self) -> None:
        self.gate.set()


async def test_a_write_is_answered_after_its_head_is_witnessed(
    desk: Desk, engine: AsyncEngine, record_keys: ChainKeys
) -> None:
    sink = GatedSink()
    found = Witness(engine, sink, record_keys)
    audit.bind_witness(engine, found)
    try:
        read = await desk.client.get("/api/v1/players?q=Botha", headers=desk.auth("desk"))
        assert read.status_code == 200  # nothing committed: nothing to wait for
        body = {"id_number": "8001015009111", "name": "New Player", "date_of_birth": "1980-01-01"}
        answer = asyncio.create_task(
            desk.client.post("/api/v1/players", json=body, headers=desk.auth("desk"))
        )
        for _ in range(200):  # until the commit is noted: then the answer must wait
            if found.pending:
                break
            await asyncio.sleep(0.01)
        assert found.pending
        await asyncio.sleep(0.05)
        assert not answer.done()
        sink.gate.set()
        response = await asyncio.wait_for(answer, 10)
        assert response.status_code == 201, response.text
        async with desk.sessions() as s:
            head = await s.get(AuditChainHead, 1)
            assert head is not None
        assert sink.lines[-1].split(" ")[2:4] == [str(head.last_id), head.last_hash]
    finally:
        audit.bind_witness(engine, None)
        await found.close()

"""Bank supervision over SAS/TCP: events become conditions, silence becomes offline,
and machines claimed by a heat are left alone."""

from __future__ import annotations

import asyncio

import pytest

from gateway.feed import MemoryFeed
from gateway.heats.supervisor import BankSupervisor
from gateway.machines.links import MachineLink
from gateway.machines.registry import open_driver

from ..emulated import BankProcess


async def test_supervision_reports_doors_and_silence() -> None:
    with BankProcess(2) as bank:
        links = {
            m["machine"]: MachineLink(
                m["machine"], open_driver(m["machine"], m["endpoint"]), attempts=1, budget_s=0.5
            )
            for m in bank.machines
        }
        feed = MemoryFeed()
        sup = BankSupervisor(links, feed=feed)
        try:
            assert await sup.poll_once("EMU-001")
            assert sup.status["EMU-001"].online
            await asyncio.to_thread(bank.ask, "door EMU-001 open")
            for _ in range(10):  # the queue drains over a few general polls (200 ms apart)
                await sup.poll_once("EMU-001")
                if sup.status["EMU-001"].conditions:
                    break
            assert sup.status["EMU-001"].conditions == ["door"]
            assert any(t == "machine/EMU-001/event" and p["event"] == "door-opened"
                       for t, p, _ in feed.messages)  # fmt: skip
            await asyncio.to_thread(bank.ask, "door EMU-001 close")
            for _ in range(10):
                await sup.poll_once("EMU-001")
                if not sup.status["EMU-001"].conditions:
                    break
            assert sup.status["EMU-001"].conditions == []

            await asyncio.to_thread(bank.ask, "fault EMU-002 no_reply")
            assert await sup.poll_once("EMU-002") is False
            assert not sup.status["EMU-002"].online
        finally:
            for link in links.values():
                await link.close()


def test_refuses_polling_faster_than_sas_allows() -> None:
    with pytest.raises(ValueError, match="200 ms"):
        BankSupervisor({}, interval_s=0.05)

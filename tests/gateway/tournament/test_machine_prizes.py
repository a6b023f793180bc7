"""Prizes to the machine against the emulated SAS machine over TCP (house clauses P1–P6,
docs/rules.md#p1): a T15 place and an HS7-style journal, the venue's setting, refusals
that change nothing, and a gateway that dies between the LP 72 send and storing its
outcome — before and after the machine took it — without a double credit."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import date, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from emulators.bank import Bank
from gateway.app.machine_prizes import MachinePrizes
from gateway.machines.capabilities import PrizeMachineState, PrizeTransferResult
from gateway.machines.driver import LinkDown
from gateway.machines.sas import SasDriver
from gateway.machines.sas_aft import AftHost
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import Stage
from gateway.tournament.services import machine_prizes as mp
from gateway.tournament.services.prizes import pay_prize, set_schedule
from protocols.sas.endpoint import parse_endpoint
from storage.audit import AuditEntry
from storage.machine_prizes import MACHINE_TENDER, MachinePrizeTransfer
from storage.prizes import PrizePayout

from .conftest import Desk, at
from .test_services_rules import refused

DAY = date(2026, 11, 2)
ANN, BEN = "8001015009087", "8101015009086"
Q = Stage.QUALIFYING
PRIZE_CENTS = 25_000
AFT_HOST = AftHost(bytes(range(1, 21)), 7001)
WHY = "Gauteng board letter 2026/114: promotional credits allowed"


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(1, seed=5) as b:
        yield b


def driver(bank: Bank) -> SasDriver:
    """A fresh driver, as a (re)started gateway opens one: machine A-01 of the floor."""
    return SasDriver(
        "A-01", parse_endpoint(bank.machines[0].endpoint), min_spacing=0.005, aft_host=AFT_HOST
    )


class DiesAfterSend:
    """The gateway killed after the LP 72 went out, before its outcome was stored."""

    def __init__(self, inner: SasDriver, *, machine_sees_it: bool) -> None:
        self.inner = inner
        self.machine_sees_it = machine_sees_it

    async def prize_state(self) -> PrizeMachineState:
        return await self.inner.prize_state()

    async def credit_prize(self, tid: str, cents: int, days: int) -> PrizeTransferResult:
        if self.machine_sees_it:
            await self.inner.credit_prize(tid, cents, days)
        raise LinkDown("gateway killed between the send and the store")

    async def read_prize_transfer(self, tid: str, cents: int) -> PrizeTransferResult:
        return await self.inner.read_prize_transfer(tid, cents)


async def _won_place(desk: Desk) -> int:
    """A tournament whose qualifying is over, Ann holding place 1 (advertised)."""
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    for id_number, name in ((ANN, "Ann"), (BEN, "Ben")):
        player = await desk.player(id_number, name)
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 12, 5))
    await desk.run(set_schedule, tid, Q, {1: PRIZE_CENTS}, actor="director", now=at(DAY, 9))
    await desk.play(heat, {1: 1500, 2: 1200}, at(DAY, 18))
    return tid


async def _journal(desk: Desk, tid: int) -> MachinePrizeTransfer:
    row: MachinePrizeTransfer = await desk.run(
        mp.journal_prize, tid, Q, 1, machine_id="A-01", signer=ANN, signature="slip 9",
        witness="supervisor", actor="cashier", now=at(DAY, 20),
    )  # fmt: skip
    return row


async def _rows(desk: Desk, model: type) -> list:  # type: ignore[type-arg]
    async def work(session: AsyncSession) -> list:  # type: ignore[type-arg]
        return list((await session.scalars(select(model))).all())

    return list(await desk.run(work))


async def test_p1_p2_p3_off_by_default_then_refusals_change_nothing(desk: Desk) -> None:
    tid = await _won_place(desk)
    kw = {"machine_id": "A-01", "signer": ANN, "signature": "s", "witness": "supervisor"}
    now = at(DAY, 20)
    await refused(
        desk, r"^rule P1: prizes to the machine are not allowed at this venue",
        mp.journal_prize, tid, Q, 1, actor="cashier", now=now, **kw,
    )  # fmt: skip
    await refused(
        desk, r"^rule P1: a reason is required", mp.set_setting, allowed=True, reason=" ",
        actor="director", now=now,
    )  # fmt: skip
    await desk.run(mp.set_setting, allowed=True, reason=WHY, actor="director", now=now)
    await refused(
        desk, r"^rule P3: machine Z-99 is not on the floor",
        mp.journal_prize, tid, Q, 1, actor="cashier", now=now, **{**kw, "machine_id": "Z-99"},
    )  # fmt: skip
    await refused(
        desk, r"^rule 15: prizes are not transferable",
        mp.journal_prize, tid, Q, 1, actor="cashier", now=now, **{**kw, "signer": BEN},
    )  # fmt: skip
    # a machine seated in a heat not over (here another tournament's) is in tournament mode
    await desk.tournament(name="Other")
    later = await desk.heat(at(DAY, 21))
    player = await desk.player("8201015009085", "Cat")
    await desk.sell(player, at(DAY, 20))
    await desk.register(later, player, at(DAY, 20))
    await desk.run(svc.begin_heat, later, present_seats=[1], at=at(DAY, 21), actor="director")
    await refused(
        desk, r"^rule P3: machine A-01 is in tournament mode \(heat \d+ \(running\)\)",
        mp.journal_prize, tid, Q, 1, actor="cashier", now=now, **kw,
    )  # fmt: skip
    actions = {a.action for a in await _rows(desk, AuditEntry)}
    assert "machine-prizes.setting" in actions


async def test_p4_p5_p6_paid_to_the_machine_over_sas(desk: Desk, bank: Bank) -> None:
    """The whole path: journaled, sent with its transaction ID, done, the payout stored
    with tender machine (AFT); the credits are on the machine once."""
    tid = await _won_place(desk)
    await desk.run(mp.set_setting, allowed=True, reason=WHY, actor="director", now=at(DAY, 19))
    row = await _journal(desk, tid)
    # while journaled, the desk may not pay it in cash as well (P4)
    await refused(
        desk, r"^rule P4: tournament:\d+\|qualifying\|1 is being paid to machine A-01",
        pay_prize, tid, Q, 1, signer=ANN, signature="slip", witness="supervisor",
        actor="cashier", now=at(DAY, 20),
    )  # fmt: skip
    d = driver(bank)
    await d.open()
    try:
        sender = MachinePrizes(desk.maker, _holding(d), clock=lambda: at(DAY, 20, 1))
        assert await sender.step() == 1
    finally:
        await d.close()
    m = bank.machines[0].machine
    assert m.restricted_credits == PRIZE_CENTS  # 1 c a credit
    last = bank.machines[0].face.answers.aft.last
    assert last is not None
    assert last.transaction_id == row.transaction_id
    (done,) = await _rows(desk, MachinePrizeTransfer)
    assert (done.status, done.sends, done.egm_status) == ("done", 1, 0)
    (payout,) = await _rows(desk, PrizePayout)
    assert (done.payout_id, payout.amount_cents, payout.witness) == (
        payout.id,
        PRIZE_CENTS,
        "supervisor",
    )
    assert payout.paid_by == "cashier"
    (paid,) = [a for a in await _rows(desk, AuditEntry) if a.action == "tournament.prizes.paid"]
    assert json.loads(paid.details)["tender"] == MACHINE_TENDER


def _holding(d: object):  # type: ignore[no-untyped-def]
    async def driver_for(machine_id: str) -> object | None:
        return d if machine_id == "A-01" else None

    return driver_for


@pytest.mark.parametrize("machine_sees_it", [True, False])
async def test_p5_a_crash_between_send_and_confirm_credits_once(
    desk: Desk, bank: Bank, machine_sees_it: bool
) -> None:
    """P5: the gateway dies after the send.  Its successor reads the machine's last
    transfer back (LP 72 FF): taken — paid, nothing sent again; never seen — sent again
    with the same transaction ID.  Either way the machine holds the prize once."""
    tid = await _won_place(desk)
    await desk.run(mp.set_setting, allowed=True, reason=WHY, actor="director", now=at(DAY, 19))
    row = await _journal(desk, tid)
    first = driver(bank)
    await first.open()
    try:
        dying = MachinePrizes(
            desk.maker, _holding(DiesAfterSend(first, machine_sees_it=machine_sees_it)),
            clock=lambda: at(DAY, 20, 1),
        )  # fmt: skip
        assert await dying.step() == 0  # the link lost: nothing stored but the send
    finally:
        await first.close()
    (journaled,) = await _rows(desk, MachinePrizeTransfer)
    assert (journaled.status, journaled.sends) == ("journaled", 1)
    assert await _rows(desk, PrizePayout) == []
    m = bank.machines[0].machine
    assert m.restricted_credits == (PRIZE_CENTS if machine_sees_it else 0)

    restarted = driver(bank)  # a new gateway: a new driver, a new registration read
    await restarted.open()
    try:
        sender = MachinePrizes(desk.maker, _holding(restarted), clock=lambda: at(DAY, 20, 5))
        assert await sender.step() == 1
        assert await sender.step() == 0  # nothing open: nothing sent again
    finally:
        await restarted.close()
    assert m.restricted_credits == PRIZE_CENTS  # once
    aft = bank.machines[0].face.answers.aft
    assert aft.last is not None
    assert aft.last.transaction_id == row.transaction_id  # the same ID, never a fresh one
    assert aft.meters[0][1] == PRIZE_CENTS  # the machine's own AFT meter: one transfer in
    (done,) = await _rows(desk, MachinePrizeTransfer)
    assert (done.status, done.sends) == ("done", 1 if machine_sees_it else 2)
    (payout,) = await _rows(desk, PrizePayout)
    assert (done.payout_id, payout.paid_at) == (payout.id, at(DAY, 20, 5))
    settled = [a for a in await _rows(desk, AuditEntry) if a.action == "machine-prizes.done"]
    assert len(settled) == 1


async def test_p3_a_machine_that_will_not_take_it_refuses_and_the_prize_stays_unpaid(
    desk: Desk, bank: Bank
) -> None:
    """The emulated machine in tournament mode (LP 74: no transfer to it possible): one
    line, nothing sent, the prize still unpaid and payable at the desk."""
    tid = await _won_place(desk)
    await desk.run(mp.set_setting, allowed=True, reason=WHY, actor="director", now=at(DAY, 19))
    await _journal(desk, tid)
    m = bank.machines[0].machine
    m.enter_tournament(credits=100, seconds=60)
    d = driver(bank)
    await d.open()
    try:
        assert await MachinePrizes(desk.maker, _holding(d), clock=lambda: at(DAY, 20)).step() == 1
    finally:
        await d.close()
    (row,) = await _rows(desk, MachinePrizeTransfer)
    assert row.status == "refused"
    assert row.reason == "rule P3: machine A-01 is locked (transfers to it are not possible now)"
    assert row.sends == 0
    assert await _rows(desk, PrizePayout) == []
    payout = await desk.run(
        pay_prize, tid, Q, 1, signer=ANN, signature="slip", witness="supervisor",
        actor="cashier", now=at(DAY, 20) + timedelta(minutes=3),
    )  # fmt: skip
    assert payout.amount_cents == PRIZE_CENTS  # cash at the desk after all (no transfer names it)
    assert row.payout_id is None

"""A retried sale is never a second charge (issue 24 no. 5): the till slip per cashier and
venue day, or the API's Idempotency-Key, makes a retry answer with the first sale; the
same key for a different sale is refused naming it; two retries racing each other get
one sale (forced to race past the look-up, on each backend)."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from gateway.errors import IdempotencyConflict, OperatorError
from gateway.tournament import services as svc
from gateway.tournament.services import cashdesk, idempotency
from storage.audit import AuditEntry
from storage.enums import Tender
from storage.tournament import Entry, EntryPurchase

from .conftest import Desk

SAST = ZoneInfo("Africa/Johannesburg")
ANN = "8001015009087"


def at(hh: int, mm: int = 0, day: int = 2) -> datetime:
    return datetime(2026, 12, day, hh, mm, tzinfo=SAST)


async def _counts(desk: Desk) -> tuple[int, int, int]:
    async def work(session: Any) -> tuple[int, int, int]:
        purchases = await session.scalar(select(func.count()).select_from(EntryPurchase))
        entries = await session.scalar(select(func.count()).select_from(Entry))
        sold = await session.scalar(
            select(func.count()).where(AuditEntry.action == "purchase.sell")
        )
        return int(purchases), int(entries), int(sold)

    found: tuple[int, int, int] = await desk.run(work)
    return found


async def _sell(desk: Desk, player: int, **kw: Any) -> cashdesk.Sale:
    base: dict[str, Any] = {"cashier": "thandi", "now": at(10)}
    sale: cashdesk.Sale = await desk.run(
        svc.sell_entries, desk.tournament_id, player, **{**base, **kw}
    )
    return sale


async def test_a_retry_on_the_same_till_slip_answers_the_first_sale(desk: Desk) -> None:
    """T5: one paid entry per slip; the retry charges nothing."""
    await desk.tournament()
    ann = await desk.player(ANN, "Ann")
    first = await _sell(desk, ann, reference="SLIP-0042", quantity=2)
    assert not first.replayed
    again = await _sell(desk, ann, reference="SLIP-0042", quantity=2, now=at(10, 1))
    assert again.replayed
    assert again.purchase.id == first.purchase.id
    assert again.entry_ids == first.entry_ids
    assert await _counts(desk) == (1, 2, 1)  # one purchase, its two entries, one audit row
    # The same slip for a different sale is refused, naming the slip.
    with pytest.raises(IdempotencyConflict, match="till slip 'SLIP-0042' \\(2026-12-02\\)"):
        await _sell(desk, ann, reference="SLIP-0042", quantity=1)
    with pytest.raises(IdempotencyConflict):
        await _sell(desk, ann, reference="SLIP-0042", quantity=2, tender=Tender.CARD)
    assert await _counts(desk) == (1, 2, 1)


async def test_the_slip_is_per_cashier_and_venue_day(desk: Desk) -> None:
    await desk.tournament()
    ann = await desk.player(ANN, "Ann")
    first = await _sell(desk, ann, reference="7")
    other_desk = await _sell(desk, ann, reference="7", cashier="sipho")
    # 23:59 and 00:01 venue time are two days (the slip book starts again).
    late = await _sell(desk, ann, reference="8", now=at(23, 59))
    next_day = await _sell(desk, ann, reference="8", now=at(0, 1, day=3))
    assert not other_desk.replayed
    assert not next_day.replayed
    assert len({first.purchase.id, other_desk.purchase.id, late.purchase.id,
                next_day.purchase.id}) == 4  # fmt: skip


async def test_an_idempotency_key_without_a_slip(desk: Desk) -> None:
    await desk.tournament()
    ann = await desk.player(ANN, "Ann")
    first = await _sell(desk, ann, idempotency_key="5b0f-retry")
    again = await _sell(desk, ann, idempotency_key="5b0f-retry", now=at(11))
    assert (again.replayed, again.purchase.id) == (True, first.purchase.id)
    with pytest.raises(IdempotencyConflict, match="Idempotency-Key '5b0f-retry'"):
        await _sell(desk, ann, idempotency_key="5b0f-retry", tender=Tender.COMP)
    for bad in ("", " ", "x" * 101, "tab\there"):
        with pytest.raises(OperatorError, match="Idempotency-Key: 1 to 100"):
            await _sell(desk, ann, idempotency_key=bad)
    assert await _counts(desk) == (1, 1, 1)


async def test_a_retry_answers_even_when_the_rules_would_now_refuse(desk: Desk) -> None:
    """The sale was made: a retry after the player was excluded (T2) still answers it,
    and makes nothing new."""
    await desk.tournament()
    ann = await desk.player(ANN, "Ann", dob=date(1980, 1, 1))
    first = await _sell(desk, ann, reference="S1")
    await desk.run(svc.disqualify, desk.tournament_id, ann, rule=23, reason="abusive",
                   actor="director", now=at(10, 30))  # fmt: skip
    again = await _sell(desk, ann, reference="S1", now=at(10, 31))
    assert (again.replayed, again.purchase.id) == (True, first.purchase.id)


async def test_two_retries_racing_make_one_sale(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On PostgreSQL both retries look the slip up before either inserts (held at a
    barrier); the unique key lets one commit and the other answers with its sale.  On
    SQLite a writer's transaction begins IMMEDIATE, so the second waits for the first to
    commit and finds its sale at the look-up: the same answer by another road."""
    await desk.tournament()
    ann = await desk.player(ANN, "Ann")
    if desk.maker.kw["bind"].dialect.name == "postgresql":
        barrier = asyncio.Barrier(2)
        looked: list[int] = []
        real = idempotency.prior_sale

        async def held(*args: Any) -> Any:
            found = await real(*args)
            looked.append(1)
            if len(looked) <= 2:  # the first look-up of each retry: both find nothing
                assert found is None
                await barrier.wait()
            return found

        monkeypatch.setattr(cashdesk, "prior_sale", held)
    sales = await asyncio.gather(*(_sell(desk, ann, reference="RACE-1") for _ in range(2)))
    assert len({s.purchase.id for s in sales}) == 1
    assert sorted(s.replayed for s in sales) == [False, True]
    assert sales[0].entry_ids == sales[1].entry_ids
    assert await _counts(desk) == (1, 1, 1)

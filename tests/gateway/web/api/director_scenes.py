"""Scenes for the director's endpoints, built through the services on the seeded desk
(:mod:`.conftest`): a heat due now with Pieter on seat 1, a scored qualifying heat (a
tie at the top, or one clear winner with qualifying over), a semi-final heat where
Pieter holds two seats (a proxy for the extra one, T16), a seat waiting for an added
semi-final heat (T21).  Each puts what it made in ``desk.ids``."""

from __future__ import annotations

from datetime import timedelta

from gateway.scores import HeatScore, TournamentMeters
from gateway.tournament import services as svc
from gateway.tournament.rules.enums import SeatStatus, Stage
from gateway.tournament.services.prizes import set_schedule
from storage.tournament import Seat
from tests.gateway.web.api.conftest import NOW, Desk

HOUR = timedelta(hours=1)


async def due_heat(d: Desk, *, begun: bool | None = None) -> None:
    """A qualifying heat advertised for now, Pieter (p2) on seat 1 with his spare entry;
    ``begun``: started with him present (True) or absent, so forfeited (False)."""
    async with svc.unit_of_work(d.sessions) as s:
        heat = await svc.schedule_heat(
            s, d.ids["tournament"], stage=Stage.QUALIFYING, starts_at=NOW, bank_name="A",
            duration_seconds=600, starting_credits=1000, actor="director", now=NOW - 24 * HOUR,
        )  # fmt: skip
        seat = await svc.register_for_heat(
            s, heat.id, d.ids["p2"], actor="desk", now=NOW - HOUR, entry_id=d.ids["spare_entry"]
        )
        d.ids["due_heat"], d.ids["due_seat"] = heat.id, seat.id
        if begun is not None:
            present = [seat.seat_number] if begun else []
            await svc.begin_heat(s, heat.id, present_seats=present, at=NOW, actor="director")


async def _score(d: Desk, seat_id: int, credits: int) -> None:
    async with svc.unit_of_work(d.sessions) as s:
        score = HeatScore(credits, TournamentMeters(50, 10, 250, 200))
        await svc.enter_manual_score(
            s, seat_id, score, reason="read off the machine", actor="director", at=NOW
        )


async def tied_at_the_top(d: Desk) -> None:
    """Thandi and Pieter both scored 1500 in the played heat: a tie across the direct
    final place (T13, T19)."""
    async with svc.unit_of_work(d.sessions) as s:
        thandi = await s.get(Seat, d.ids["scored_seat"])
        assert thandi is not None
        pieter = Seat(
            heat_id=thandi.heat_id, stage=Stage.QUALIFYING, seat_number=2, machine_id="A02",
            entry_id=d.ids["spare_entry"], holder_player_id=d.ids["p2"],
            status=SeatStatus.PRESENT, assigned_at=NOW - 3 * HOUR,
        )  # fmt: skip
        s.add(pieter)
        await s.flush()
        d.ids["pieter_seat"] = pieter.id
    await _score(d, d.ids["scored_seat"], 1500)
    await _score(d, d.ids["pieter_seat"], 1500)


async def qualifying_over(d: Desk) -> None:
    """The future heat cancelled and Thandi's score in: the qualifying is over and she
    holds place 1, advertised at R1000 (T15)."""
    async with svc.unit_of_work(d.sessions) as s:
        await svc.cancel_heat(
            s, d.ids["heat"], announced_via="MC", reason="bank A closed", actor="director",
            now=NOW,
        )  # fmt: skip
    await _score(d, d.ids["scored_seat"], 1500)
    async with svc.unit_of_work(d.sessions) as s:
        await set_schedule(
            s, d.ids["tournament"], Stage.QUALIFYING, {1: 100000}, actor="director", now=NOW,
            reason="advertised",
        )  # fmt: skip


async def qualifying_over_with_a_semi(d: Desk) -> None:
    """As :func:`qualifying_over` with Pieter in too (a semi-finalist, T14) and a
    semi-final heat to seat him in."""
    async with svc.unit_of_work(d.sessions) as s:
        thandi = await s.get(Seat, d.ids["scored_seat"])
        assert thandi is not None
        pieter = Seat(
            heat_id=thandi.heat_id, stage=Stage.QUALIFYING, seat_number=2, machine_id="A02",
            entry_id=d.ids["spare_entry"], holder_player_id=d.ids["p2"],
            status=SeatStatus.PRESENT, assigned_at=NOW - 3 * HOUR,
        )  # fmt: skip
        s.add(pieter)
        await s.flush()
        d.ids["pieter_seat"] = pieter.id
    await _score(d, d.ids["pieter_seat"], 900)
    await qualifying_over(d)
    await _semi_heat(d)


async def _semi_heat(d: Desk) -> int:
    async with svc.unit_of_work(d.sessions) as s:
        heat = await svc.schedule_heat(
            s, d.ids["tournament"], stage=Stage.SEMI_FINAL, starts_at=NOW + 72 * HOUR,
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=NOW,
        )  # fmt: skip
        d.ids["semi_heat"] = heat.id
        return heat.id


async def two_semi_seats(d: Desk) -> None:
    """Pieter holds two semi-final seats (his spare entry and a second one): the second
    is an extra seat, for a proxy (T16)."""
    heat = await _semi_heat(d)
    async with svc.unit_of_work(d.sessions) as s:
        sold = await svc.sell_entries(s, d.ids["tournament"], d.ids["p2"], cashier="c", now=NOW)
        for number, entry in ((1, d.ids["spare_entry"]), (2, sold.entry_ids[0])):
            seat = Seat(
                heat_id=heat, stage=Stage.SEMI_FINAL, seat_number=number,
                machine_id=f"A0{number}", entry_id=entry, holder_player_id=d.ids["p2"],
                status=SeatStatus.ASSIGNED, assigned_at=NOW,
            )  # fmt: skip
            s.add(seat)
            await s.flush()
            d.ids[f"semi_seat_{number}"] = seat.id


async def waiting_for_an_added_heat(d: Desk) -> None:
    """Pieter's semi-final seat was moved off a failed machine with no free seat in the
    stage; the director added a semi-final heat (T21)."""
    await two_semi_seats(d)
    async with svc.unit_of_work(d.sessions) as s:
        seat = await s.get(Seat, d.ids["semi_seat_2"])
        assert seat is not None
        seat.status = SeatStatus.MOVED
        added = await svc.schedule_heat(
            s, d.ids["tournament"], stage=Stage.SEMI_FINAL, starts_at=NOW + 96 * HOUR,
            bank_name="A", duration_seconds=600, starting_credits=1000, actor="director",
            now=NOW, announced_via="MC",
        )  # fmt: skip
        d.ids["added_heat"] = added.id


async def stale_entry(d: Desk) -> None:
    """Pieter bought an entry three days ago and never used it: past its 48 hours (T5)."""
    async with svc.unit_of_work(d.sessions) as s:
        sold = await svc.sell_entries(
            s, d.ids["tournament"], d.ids["p2"], cashier="c", now=NOW - 72 * HOUR
        )
        d.ids["stale_entry"] = sold.entry_ids[0]


async def bank_held(d: Desk) -> None:
    """A gateway (``reelgate serve``) holds bank A: only then is an order queued."""
    from storage.lease import Owner, acquire

    await acquire(d.sessions, "A", Owner("serve", "gateway-1", 4242), now=NOW, period=HOUR)

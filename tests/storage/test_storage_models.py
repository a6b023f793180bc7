"""Tournament tables on both backends: the database itself refuses what the rules forbid."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.exc import IntegrityError, StatementError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from storage.db import Base, make_sessionmaker
from storage.testing import T0, Builder
from storage.tournament import (
    CardDraw,
    CardSuit,
    DrawMethod,
    DrawnBy,
    EntryPurchase,
    Heat,
    PurchaseKind,
    Score,
    ScoreSource,
    Seat,
    SeatStatus,
    Stage,
    Tournament,
)

SAST = ZoneInfo("Africa/Johannesburg")


@pytest.fixture
async def session(engine: AsyncEngine) -> AsyncIterator[AsyncSession]:
    async with make_sessionmaker(engine)() as s:
        yield s
        await s.rollback()


@pytest.fixture
async def b(session: AsyncSession) -> Builder:
    builder = Builder(session)
    await builder.make_tournament()
    return builder


async def rejected(session: AsyncSession, *rows: Base, why: str | None = None) -> None:
    """Adding ``rows`` must fail in the database for reason ``why`` (a regex matching the
    PostgreSQL constraint name or SQLite's message); the session stays usable."""
    with pytest.raises(IntegrityError, match=why):  # noqa: PT012
        async with session.begin_nested():
            session.add_all(rows)
            await session.flush()


async def test_tournament_defaults_follow_the_rules(b: Builder) -> None:
    t = b.t
    assert t.venue_tz == "Africa/Johannesburg"
    assert t.entry_price_cents == 5000  # T5: R50 a seat
    assert t.semi_final_size == 49  # T14
    assert t.direct_final_places == 1  # T13
    assert t.entry_validity == "same-day"  # T7/T8 by default
    assert t.minimum_age == 18  # T1


async def test_aware_datetimes_round_trip_as_utc(session: AsyncSession, b: Builder) -> None:
    local = datetime(2026, 11, 26, 19, 30, 15, 123456, tzinfo=SAST)
    heat = Heat(
        tournament_id=b.t.id,
        stage=Stage.FINAL,
        number=1,
        scheduled_start=local,
        duration_seconds=900,
        starting_credits=2000,
        bank_name="bank-a",
    )
    session.add(heat)
    await session.flush()
    heat_id = heat.id
    session.expire_all()
    got = (await session.execute(select(Heat).where(Heat.id == heat_id))).scalar_one()
    assert got.scheduled_start.tzinfo is not None
    assert got.scheduled_start.utcoffset() == timedelta(0)
    assert got.scheduled_start == local
    assert got.scheduled_start.hour == 17  # SAST is UTC+2
    # Ordering by instant works across zones on both backends.
    later = (
        await session.execute(
            select(Heat.id).where(Heat.scheduled_start > datetime(2026, 11, 26, 17, 30, tzinfo=UTC))
        )
    ).scalars()
    assert list(later) == [heat_id]


async def test_naive_datetime_is_refused(session: AsyncSession, b: Builder) -> None:
    heat = Heat(
        tournament_id=b.t.id,
        stage=Stage.QUALIFYING,
        number=9,
        scheduled_start=datetime(2026, 11, 26, 19, 30),
        duration_seconds=600,
        starting_credits=1000,
        bank_name="bank-a",
    )
    with pytest.raises(StatementError, match="naive datetime"):  # noqa: PT012
        async with session.begin_nested():
            session.add(heat)
            await session.flush()


async def test_non_datetime_is_refused(session: AsyncSession, b: Builder) -> None:
    with pytest.raises(StatementError, match="expected a datetime"):
        async with session.begin_nested():
            await session.execute(
                insert(Heat).values(
                    tournament_id=b.t.id, stage="final", number=2,
                    scheduled_start="2026-11-26 19:30", duration_seconds=600,
                    starting_credits=1000, bank_name="bank-a",
                )
            )  # fmt: skip


async def test_unknown_enum_value_is_refused(session: AsyncSession, b: Builder) -> None:
    with pytest.raises(StatementError):
        async with session.begin_nested():
            await session.execute(insert(Tournament).values(name="x", entry_validity="72h"))


async def test_raw_sql_enum_check_holds(session: AsyncSession, b: Builder) -> None:
    with pytest.raises(IntegrityError):
        async with session.begin_nested():
            await session.execute(
                text("UPDATE tournaments SET entry_validity = '72h' WHERE id = :id"),
                {"id": b.t.id},
            )


async def test_double_booked_seat_number_is_refused(session: AsyncSession, b: Builder) -> None:
    p1, p2 = await b.player(), await b.player()
    (e1,), (e2,) = await b.entries(p1), await b.entries(p2)
    heat = await b.heat()
    await b.seat(e1, heat, seat_number=7, machine_id="EGM-007")
    clash = Seat(
        heat_id=heat.id,
        stage=heat.stage,
        seat_number=7,
        machine_id="EGM-008",
        entry_id=e2.id,
        holder_player_id=p2.id,
    )
    await rejected(
        session, clash, why="uq_seats_heat_id_seat_number|seats.heat_id, seats.seat_number"
    )


async def test_machine_holds_one_active_seat_per_heat(session: AsyncSession, b: Builder) -> None:
    p1, p2 = await b.player(), await b.player()
    (e1,), (e2,) = await b.entries(p1), await b.entries(p2)
    heat = await b.heat()
    first = await b.seat(e1, heat, seat_number=1, machine_id="EGM-001")
    clash = Seat(
        heat_id=heat.id,
        stage=heat.stage,
        seat_number=2,
        machine_id="EGM-001",
        entry_id=e2.id,
        holder_player_id=p2.id,
    )
    await rejected(
        session, clash, why="ux_seats_heat_machine_active|seats.heat_id, seats.machine_id"
    )
    # Once the first seat is moved off the machine (T20), the machine is free.
    first.status = SeatStatus.MOVED
    await session.flush()
    await b.seat(e2, heat, seat_number=2, machine_id="EGM-001")


async def test_entry_is_used_once_per_stage(session: AsyncSession, b: Builder) -> None:
    p = await b.player()
    (entry,) = await b.entries(p)
    h1, h2 = await b.heat(number=1), await b.heat(number=2)
    seat = await b.seat(entry, h1)
    again = Seat(
        heat_id=h2.id, stage=h2.stage, seat_number=1, machine_id="EGM-001",
        entry_id=entry.id, holder_player_id=p.id,
    )  # fmt: skip
    await rejected(session, again, why="ux_seats_entry_stage_active|seats.entry_id, seats.stage")
    # Malfunction: the seat is moved to a later heat (T20), the entry plays there.
    seat.status = SeatStatus.MOVED
    await session.flush()
    moved = await b.seat(entry, h2)
    seat.moved_to_seat_id = moved.id
    await session.flush()


async def test_one_seat_per_player_per_qualifying_heat_rule_16(
    session: AsyncSession, b: Builder
) -> None:
    p = await b.player()
    e1, e2 = await b.entries(p, seats=2)
    heat = await b.heat(Stage.QUALIFYING, 1)
    await b.seat(e1, heat)
    clash = Seat(
        heat_id=heat.id, stage=heat.stage, seat_number=2, machine_id="EGM-002",
        entry_id=e2.id, holder_player_id=p.id,
    )  # fmt: skip
    await rejected(
        session,
        clash,
        why="ux_seats_qualifying_player_rule_16|seats.heat_id, seats.holder_player_id",
    )
    # In a final stage a player may hold several seats (T16, played by proxies).
    semi = await b.heat(Stage.SEMI_FINAL, 1)
    nominee = await b.player("Nominee")
    await b.seat(e1, semi)
    await b.seat(e2, semi, played_by=nominee)


async def test_no_substitute_in_qualifying_rule_12(session: AsyncSession, b: Builder) -> None:
    p, other = await b.player(), await b.player()
    (entry,) = await b.entries(p)
    heat = await b.heat()
    substitute = Seat(
        heat_id=heat.id, stage=heat.stage, seat_number=5, machine_id="EGM-005",
        entry_id=entry.id, holder_player_id=p.id, played_by_player_id=other.id,
    )  # fmt: skip
    await rejected(session, substitute, why="no_substitute_rule_12")


async def test_seat_stage_must_match_heat_stage(session: AsyncSession, b: Builder) -> None:
    p = await b.player()
    (entry,) = await b.entries(p)
    heat = await b.heat(Stage.QUALIFYING)
    wrong = Seat(
        heat_id=heat.id, stage=Stage.FINAL, seat_number=3, machine_id="EGM-003",
        entry_id=entry.id, holder_player_id=p.id,
    )  # fmt: skip
    await rejected(session, wrong, why="fk_seats_heat_id_stage_heats|FOREIGN KEY")


async def test_seat_holder_must_own_the_entry(session: AsyncSession, b: Builder) -> None:
    p, thief = await b.player(), await b.player()
    (entry,) = await b.entries(p)
    heat = await b.heat()
    wrong = Seat(
        heat_id=heat.id, stage=heat.stage, seat_number=4, machine_id="EGM-004",
        entry_id=entry.id, holder_player_id=thief.id,
    )  # fmt: skip
    await rejected(session, wrong, why="fk_seats_entry_id_holder_player_id_entries|FOREIGN KEY")


def _score_like(score: Score, **changes: object) -> Score:
    values = {c.key: getattr(score, c.key) for c in Score.__table__.columns if c.key != "id"}
    values.update(changes)
    return Score(**values)


async def test_double_score_is_refused(session: AsyncSession, b: Builder) -> None:
    p = await b.player()
    score = await b.played(p, 1500)
    await rejected(
        session,
        _score_like(score, final_credits=9999),
        why="uq_scores_(seat_id|entry_id_stage)|scores.(seat_id|entry_id, scores.stage)",
    )


async def test_score_must_match_its_seat(session: AsyncSession, b: Builder) -> None:
    p, q = await b.player(), await b.player()
    score = await b.played(p, 1500)
    (p_spare,) = await b.entries(p)
    (q_entry,) = await b.entries(q)
    q_seat = await b.seat(q_entry, await b.heat(number=2))
    # q's seat, but p's unplayed entry: the score would not be the seat's.
    wrong = _score_like(score, seat_id=q_seat.id, heat_id=q_seat.heat_id, entry_id=p_spare.id)
    await rejected(session, wrong, why="fk_scores_seat_id_heat_id_entry_id_stage_seats|FOREIGN KEY")


async def test_manual_score_names_who(session: AsyncSession, b: Builder) -> None:
    p = await b.player()
    (entry,) = await b.entries(p)
    seat = await b.seat(entry, await b.heat())
    manual = Score(
        tournament_id=b.t.id, stage=seat.stage, heat_id=seat.heat_id, seat_id=seat.id,
        entry_id=entry.id, player_id=p.id, games_played=10, games_won=1, credits_wagered=100,
        credits_won=50, final_credits=950, source=ScoreSource.MANUAL, recorded_at=T0,
    )  # fmt: skip
    await rejected(
        session,
        manual,
        why="manual_score_names_who",
    )
    manual.recorded_by = "director:anna"
    session.add(manual)
    await session.flush()


@pytest.mark.parametrize(
    ("kind", "seats", "amount", "package_credit", "why"),
    [
        # T5: the casino pays for a complimentary entry, and it is a single entry
        (PurchaseKind.COMPLIMENTARY, 1, 5000, 0, "complimentary_rule_5"),
        (PurchaseKind.COMPLIMENTARY, 2, 0, 0, "complimentary_rule_5"),
        (PurchaseKind.CASH, 1, 0, 0, "complimentary_rule_5"),  # a paid entry has a price
        (PurchaseKind.CASH, 0, 5000, 0, "seats_positive"),
        # T6: only a package carries a casino-credit portion
        (PurchaseKind.CARD, 1, 5000, 1000, "package_credit_rule_6"),
    ],
)
async def test_purchase_checks(
    session: AsyncSession,
    b: Builder,
    kind: PurchaseKind,
    seats: int,
    amount: int,
    package_credit: int,
    why: str,
) -> None:
    p = await b.player()
    bad = EntryPurchase(
        tournament_id=b.t.id, player_id=p.id, kind=kind, seats=seats, amount_cents=amount,
        package_credit_cents=package_credit, purchased_at=T0,
        valid_until=T0 + timedelta(days=1), cashier="cashier:thandi",
    )  # fmt: skip
    await rejected(session, bad, why=why)


async def test_complimentary_and_package_purchases_accepted(
    session: AsyncSession, b: Builder
) -> None:
    p = await b.player()
    session.add_all(
        [
            EntryPurchase(
                tournament_id=b.t.id, player_id=p.id, kind=PurchaseKind.COMPLIMENTARY,
                seats=1, amount_cents=0, purchased_at=T0, valid_until=T0 + timedelta(hours=14),
                cashier="cashier:thandi",
            ),
            EntryPurchase(
                tournament_id=b.t.id, player_id=p.id, kind=PurchaseKind.PACKAGE, seats=4,
                amount_cents=20000, package_credit_cents=5000, purchased_at=T0,
                valid_until=T0 + timedelta(hours=48), cashier="cashier:thandi",
            ),
        ]
    )  # fmt: skip
    await session.flush()


async def _draw(b: Builder, **changes: object) -> CardDraw:
    p = await b.player()
    score = await b.played(p, 1200, heat_no=3)
    values: dict[str, object] = dict(
        tournament_id=b.t.id, stage=Stage.QUALIFYING, tie_credits=1200, round=1,
        entry_id=score.entry_id, player_id=p.id, drawn_by=DrawnBy.PLAYER, card_rank=12,
        card_suit=CardSuit.HEARTS, method=DrawMethod.PHYSICAL, context="test tie",
        recorded_by="director:anna",
    )  # fmt: skip
    values.update(changes)
    return CardDraw(**values)


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"card_rank": 14}, "card_rank_ace_low"),  # T19: A=1 .. K=13
        ({"card_rank": 0}, "card_rank_ace_low"),
        ({"method": DrawMethod.DIGITAL}, "digital_draw_verifiable"),  # seed + algorithm kept
        ({"drawn_by": DrawnBy.PUBLIC}, "drawer_named"),  # the member of the public is named
        ({"round": 0}, "round_range"),
    ],
)
async def test_card_draw_checks_rule_19(
    session: AsyncSession, b: Builder, changes: dict[str, object], why: str
) -> None:
    await rejected(session, await _draw(b, **changes), why=why)


async def test_card_draw_once_per_round(session: AsyncSession, b: Builder) -> None:
    draw = await _draw(b, method=DrawMethod.DIGITAL, seed="ab" * 16, algorithm="hmac-sha256-v1")
    session.add(draw)
    await session.flush()
    again = CardDraw(
        **{c.key: getattr(draw, c.key) for c in CardDraw.__table__.columns if c.key != "id"}
    )
    await rejected(session, again, why="uq_card_draws|UNIQUE constraint failed: card_draws")
    assert draw.recorded_at.tzinfo is not None

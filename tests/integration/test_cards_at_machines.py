"""Players' cards at the machines, end to end (issue 30 item 1): an emulated board puts
a card in and pulls it; the card desk maps the card to a player, applies T1 (age),
T2-T3 (the exclusion registers in force now) and an active disqualification, audits the
outcome as ``system:board/<MACHINE>``, and sends a refusal to the machine's display.

Over the embedded amqtt broker, or Mosquitto when ``REELGATE_MQTT_URL`` is set.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from emulators.machine import EmulatedMachine
from emulators.mqtt_board import MqttBoard, card_control
from gateway.cards import CardDesk
from gateway.tournament.services.cards import (
    ACCEPTED,
    NOT_REGISTERED,
    OUT,
    REFUSED,
    CardDecision,
    cards_at_machines,
)
from protocols.mqtt import codec
from protocols.mqtt.broker import EmbeddedBroker
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import ReaderKind
from protocols.mqtt.topics import Channel, board_topic
from storage.audit import AuditEntry
from storage.db import make_sessionmaker
from storage.enums import ExclusionKind
from storage.tournament import Exclusion, Player

from ..gateway.board.agents import until

NOW = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)  # 20:00 in Johannesburg
ZONE = "Africa/Johannesburg"

pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")


@pytest.fixture
async def broker_url() -> AsyncIterator[str]:
    url = os.environ.get("REELGATE_MQTT_URL", "")
    if url:
        yield url
        return
    async with EmbeddedBroker() as running:
        yield running.url


async def _players(engine: AsyncEngine) -> None:
    """Adults, one of them on the self-exclusion register, and a minor's card (a row
    whose date of birth was corrected after the card was issued)."""
    sessions = make_sessionmaker(engine)
    async with sessions() as s, s.begin():
        s.add_all([
            Player(id_number="8001015009087", name="Thabo Mokoena",
                   date_of_birth=date(1980, 1, 1), card_number="6009100000000001"),
            Player(id_number="9002025009088", name="Anna Botha",
                   date_of_birth=date(1990, 2, 2), card_number="6009100000000002"),
            Player(id_number="1003035009089", name="Sipho Dlamini",
                   date_of_birth=date(2010, 3, 3), card_number="6009100000000003"),
            Exclusion(kind=ExclusionKind.SELF_EXCLUSION, id_number="9002025009088",
                      name="Anna Botha",
                      valid_from=datetime(2026, 6, 1, tzinfo=UTC), valid_until=None,
                      source="test register", note="SE-2026-0042", created_by="desk1"),
            Player(id_number="8504045009080", name="Lerato Nkosi",
                   date_of_birth=date(1985, 4, 4), card_number="04A1B2C3"),
            Exclusion(kind=ExclusionKind.STAFF, id_number="8504045009080", name="Lerato Nkosi",
                      valid_from=datetime(2026, 1, 1, tzinfo=UTC), valid_until=None,
                      source="HR list", note="cashier", created_by="desk1"),
        ])  # fmt: skip


class Floor:
    def __init__(self, engine: AsyncEngine, url: str) -> None:
        self.site = f"t{uuid.uuid4().hex[:10]}"
        self.settings = MqttSettings.from_url(url)
        self.board = MqttBoard(EmulatedMachine("A01"), self.settings, self.site)
        self.decisions: asyncio.Queue[CardDecision] = asyncio.Queue()
        self.desk = CardDesk(
            make_sessionmaker(engine), self.settings, self.site, venue_zone=ZONE,
            clock=lambda: NOW, on_decision=self.decisions.put_nowait,
        )  # fmt: skip

    async def next(self) -> CardDecision:
        return await asyncio.wait_for(self.decisions.get(), 10)


@pytest.fixture
async def floor(engine: AsyncEngine, broker_url: str) -> AsyncIterator[Floor]:
    await _players(engine)
    f = Floor(engine, broker_url)
    await f.desk.start()
    await f.board.start()
    try:
        yield f
    finally:
        await f.board.stop()
        await f.desk.close()


async def test_an_eligible_card_in_and_out(floor: Floor, engine: AsyncEngine) -> None:
    """T1-T4: an adult on no register plays; card-in and card-out are audited."""
    floor.board.insert_card("6009100000000001")
    decision = await floor.next()
    assert decision.outcome == ACCEPTED
    assert decision.player_name == "Thabo Mokoena"
    floor.board.pull_card()
    out = await floor.next()
    assert (out.action, out.outcome, out.player_name) == ("card-out", OUT, "Thabo Mokoena")
    assert floor.board.messages == []  # nothing refused, nothing shown
    async with make_sessionmaker(engine)() as s:
        rows = (await s.execute(select(AuditEntry).where(AuditEntry.action.like("card.%"))
                                .order_by(AuditEntry.id))).scalars().all()  # fmt: skip
        assert [(r.actor, r.action, r.subject) for r in rows] == [
            ("system:board/A01", "card.in", "machine:A01"),
            ("system:board/A01", "card.out", "machine:A01"),
        ]
        [row] = await cards_at_machines(s)
    assert (row.machine, row.action, row.in_machine) == ("A01", "card-out", False)


async def test_an_under_age_card_is_refused_on_the_display(floor: Floor) -> None:
    """T1: nobody under 18 may participate (16 on 7 December 2026)."""
    floor.board.insert_card("6009100000000003")
    decision = await floor.next()
    assert (decision.outcome, decision.rule) == (REFUSED, "1")
    assert "under 18" in decision.reason
    await until(lambda: bool(floor.board.messages), "the refusal on the display")
    assert floor.board.messages == ["Card refused: please see the tournament desk"]
    assert floor.desk.stats.messages == 1


async def test_an_excluded_card_is_refused(floor: Floor, engine: AsyncEngine) -> None:
    """T2: a self-excluded person may not participate (the register in force now)."""
    floor.board.insert_card("6009100000000002")
    decision = await floor.next()
    assert (decision.outcome, decision.rule) == (REFUSED, "2")
    assert "SE-2026-0042" in decision.reason
    await until(lambda: bool(floor.board.messages), "the refusal on the display")
    async with make_sessionmaker(engine)() as s:
        [row] = await cards_at_machines(s)
    assert (row.outcome, row.rule, row.in_machine) == (REFUSED, "2", False)


async def test_a_staff_card_is_refused(floor: Floor) -> None:
    """T3: casino staff may not participate."""
    floor.board.insert_card("04A1B2C3")
    decision = await floor.next()
    assert (decision.outcome, decision.rule) == (REFUSED, "3")


async def test_an_unknown_card_is_not_registered(floor: Floor) -> None:
    assert card_control({"A01": floor.board}, "card-in A01 0000777") == "A01: card 0000777 in"
    decision = await floor.next()
    assert decision.outcome == NOT_REGISTERED
    assert decision.line == "A01: card 0000777 is not registered"
    await until(lambda: bool(floor.board.messages), "the message on the display")
    assert floor.board.messages == ["Card not registered: please see the tournament desk"]


async def test_repeats_and_foreign_cards_are_dropped(floor: Floor) -> None:
    """QoS 1 redelivery is decided once; a card naming another machine is dropped."""
    topic = board_topic(floor.site, "A01", Channel.CARD)
    card = codec.Card(seq=10**15, at=NOW, action=codec.CardAction.CARD_IN, machine="A01",
                      card="6009100000000001", reader=codec.ReaderKind.RFID)  # fmt: skip
    foreign = codec.Card(seq=10**15 + 1, at=NOW, action=codec.CardAction.CARD_IN,
                         machine="B07", card="6009100000000001",
                         reader=codec.ReaderKind.RFID)  # fmt: skip
    session = floor.board.session
    for message in (card, card, foreign):
        await session.publish(topic, codec.encode(message))
    assert (await floor.next()).outcome == ACCEPTED
    await until(lambda: floor.desk.stats.received == 3, "three card messages")
    assert floor.desk.stats.repeats == 1
    assert floor.desk.stats.mismatched == 1
    assert floor.desk.stats.decided == 1


async def test_the_board_agent_reads_an_rfid_card_from_its_serial_port(
    engine: AsyncEngine, broker_url: str
) -> None:
    """``reelgate board --card-reader serial:…?rfid``: a UID line on the agent's serial
    port (a pseudo-terminal here) is a card-in, the same UID again a card-out; the
    card desk decides both (T1-T3: an adult on no register) and a bad line is counted."""
    from emulators.bank import Bank
    from gateway.board.cards import CardSlot, ReaderSpec

    from ..gateway.board.agents import make_agent

    await _players(engine)
    site = f"t{uuid.uuid4().hex[:10]}"
    decisions: asyncio.Queue[CardDecision] = asyncio.Queue()
    settings = MqttSettings.from_url(broker_url)
    desk = CardDesk(make_sessionmaker(engine), settings, site, venue_zone=ZONE,
                    clock=lambda: NOW, on_decision=decisions.put_nowait)  # fmt: skip
    controller, device = os.openpty()
    async with Bank(1, seed=3) as bank:
        agent = make_agent(bank, 0, broker_url, site)
        machine = agent.egm.machine_id
        agent.card_reader = ReaderSpec("serial", os.ttyname(device), ReaderKind.RFID)
        agent.card_slot = CardSlot(debounce=0.0)  # each line below is a fresh tap
        await desk.start()
        await agent.start()
        try:
            os.write(controller, b"not-a-uid\r\n04a1b2c3d4e5f6\r\n")
            first = await asyncio.wait_for(decisions.get(), 10)
            os.write(controller, b"04a1b2c3d4e5f6\r\n")
            second = await asyncio.wait_for(decisions.get(), 10)
        finally:
            await agent.stop()
            await desk.close()
            os.close(controller)
            os.close(device)
    assert (first.machine, first.action, first.outcome) == (machine, "card-in", NOT_REGISTERED)
    assert first.card == "04A1B2C3D4E5F6"  # the UID in upper case
    assert (second.action, second.outcome) == ("card-out", NOT_REGISTERED)
    assert agent.reader_stats.bad_format == 1
    assert agent.reader_stats.reads == 2
    assert desk.stats.messages == 0  # a SAS board has no display: the console only


async def test_w2_w5_a_walkup_session_is_offered_and_confirmed_at_the_machine(
    floor: Floor, engine: AsyncEngine
) -> None:
    """Walk-up play on an emulated board (docs/rules.md#w5): Thabo's card in A01 inside the
    20:00 window makes an offer on the machine's display; the card out and in again
    confirms it, and the session is a one-seat heat on A01 (W6).  A card put in outside
    the window is refused on the display with the window's hours (W2)."""
    from gateway.tournament.services import sell_entries, unit_of_work
    from gateway.tournament.services.setup import create_tournament
    from gateway.tournament.services.walkup import WalkupDecision, set_window
    from gateway.tournament.settings import TournamentSettings
    from storage.floor import FloorBank, FloorMachine
    from storage.tournament import Seat
    from storage.walkup import WalkupSession

    sessions = make_sessionmaker(engine)
    async with unit_of_work(sessions) as s:
        s.add(FloorBank(name="A", enabled=True))
        await s.flush()
        s.add(FloorMachine(machine_id="A01", bank_name="A", position=1,
                           endpoint="mqtt://A01", updated_at=NOW))  # fmt: skip
        t = await create_tournament(s, "Walk-up night", TournamentSettings(), actor="director")
        thabo = (await s.scalars(select(Player).where(Player.name == "Thabo Mokoena"))).one()
        await sell_entries(s, t.id, thabo.id, package_code="single", cashier="c",
                           now=NOW.replace(hour=10))  # fmt: skip
        await set_window(s, t.id, "A", opens="18:00", closes="23:00", seconds=300,
                         credits=500, confirm_seconds=60, enabled=True, actor="director",
                         reason="walk-up night", at=NOW)  # fmt: skip
    walkups: list[WalkupDecision] = []
    floor.desk.on_walkup = walkups.append
    floor.board.insert_card("6009100000000001")
    assert (await floor.next()).outcome == ACCEPTED
    await until(lambda: len(floor.board.messages) == 1, "the offer on the display")
    assert floor.board.messages[0] == (
        "Walk-up: 500 credits, 5:00. Remove and re-insert card within 60s to start"
    )
    floor.board.pull_card()
    assert (await floor.next()).outcome == OUT
    floor.board.insert_card("6009100000000001")
    assert (await floor.next()).outcome == ACCEPTED
    await until(lambda: len(floor.board.messages) == 2, "the start on the display")
    assert floor.board.messages[1] == "Session starting: good luck"
    assert [w.verdict.kind for w in walkups] == ["offer", "confirm"]
    async with sessions() as s:
        [row] = (await s.scalars(select(WalkupSession))).all()
        assert row.status == "started"
        assert row.heat_id is not None
        [seat] = (await s.scalars(select(Seat).where(Seat.heat_id == row.heat_id))).all()
        assert (seat.machine_id, seat.holder_player_id) == ("A01", row.player_id)
    # Outside the window (the desk's clock at 17:00 venue time): refused, with the hours.
    floor.desk.clock = lambda: NOW.replace(hour=15)
    floor.board.pull_card()
    await floor.next()
    floor.board.insert_card("6009100000000001")
    await floor.next()
    await until(lambda: len(floor.board.messages) == 3, "the refusal on the display")
    assert floor.board.messages[2] == "Walk-up play is open 18:00-23:00"
    assert walkups[-1].verdict.clause == "W2"

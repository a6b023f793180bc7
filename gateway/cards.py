"""The card desk: players' cards at the machines, from the boards' ``card`` channel.

Subscribes to ``reelgate/v1/<site>/board/+/card`` (``docs/mqtt.md``, "Player cards")
and decides each ``card-in`` / ``card-out`` in order, one transaction each, with
:func:`gateway.tournament.services.cards.card_at_machine` (the player by card number,
T1-T3 and an active disqualification at card-in, the outcome audited as
``system:board/<MACHINE>``).  A refused or unregistered card-in at a board that says it
has a display line (``display: true``) gets a ``show-message`` command back; every
outcome is logged and shown on the console (``/console/cards``).

An accepted card-in at a machine of a walk-up bank is then judged for walk-up play in the
same transaction (:func:`gateway.tournament.services.walkup.walkup_at_card_in`,
docs/rules.md#w2 to #w5): an offer, its confirm (the same card put in again) or a
refusal with its clause; the machine's display shows which (W9).  A card-out ends no
walk-up session (W7).

The eligibility instant is the gateway's clock when the card is decided, never the
board's ``at`` (a board's clock is the gateway's only once it has been set).  QoS 1
repeats are dropped by the board's sequence number; a payload that does not decode, a
foreign topic or a card naming another machine than its topic is counted and dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from gateway.tournament.rules.walkup import REFUSE
from gateway.tournament.services.cards import (
    ACCEPTED,
    CARD_IN,
    NOT_REGISTERED,
    REFUSED,
    CardDecision,
    card_at_machine,
)
from gateway.tournament.services.walkup import WalkupDecision, walkup_at_card_in
from protocols.mqtt import codec
from protocols.mqtt.client import MqttSession, MqttSettings
from protocols.mqtt.codec import Command, CommandMessage
from protocols.mqtt.topics import Channel, board_filter, board_topic, parse_board_topic

log = logging.getLogger(__name__)

QUEUE = 1024  # cards waiting to be decided; a floor puts in a few a minute
MESSAGE_SECONDS = 10


@dataclass(slots=True)
class CardDeskStats:
    received: int = 0
    decided: int = 0
    repeats: int = 0  # QoS 1 redelivery (a sequence number already seen)
    mismatched: int = 0  # the payload's machine is not the topic's
    dropped: int = 0  # the queue was full
    failed: int = 0  # the database refused (logged); the card is not decided
    messages: int = 0  # show-message commands sent
    walkups: int = 0  # card-ins judged for walk-up play (offers, confirms, refusals)


class CardDesk:
    """``await desk.start()`` ... ``await desk.close()``."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        settings: MqttSettings,
        site: str,
        *,
        venue_zone: str,
        minimum_age: int = 18,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        on_decision: Callable[[CardDecision], None] | None = None,
        on_walkup: Callable[[WalkupDecision], None] | None = None,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.site = site
        self.venue_zone = venue_zone
        self.minimum_age = minimum_age
        self.clock = clock
        self.on_decision = on_decision
        self.on_walkup = on_walkup
        self.stats = CardDeskStats()
        self.session = MqttSession(settings, client_id=f"reelgate-cards-{uuid.uuid4().hex[:10]}")
        self._filter = board_filter(site, Channel.CARD)
        self._last_seq: dict[str, int] = {}
        self._queue: asyncio.Queue[codec.Card] = asyncio.Queue(QUEUE)
        self._worker: asyncio.Task[None] | None = None

    async def start(self, *, wait: bool = True) -> None:
        await self.session.route(self._filter, self._on_card)
        self._worker = asyncio.create_task(self._work(), name=f"card-desk-{self.site}")
        await self.session.start(wait=wait)

    async def close(self) -> None:
        task, self._worker = self._worker, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.session.close()

    def _on_card(self, topic: str, payload: bytes) -> None:
        where = parse_board_topic(topic)  # TopicError: counted and dropped by the session
        card = codec.decode(Channel.CARD, payload)  # PayloadError: the same
        if not isinstance(card, codec.Card):  # pragma: no cover - decode's contract
            raise codec.PayloadError("card: not a card")
        self.stats.received += 1
        if card.machine != where.machine:
            self.stats.mismatched += 1
            log.warning("card for %s on %s's topic: dropped", card.machine, where.machine)
            return
        if card.seq <= self._last_seq.get(card.machine, -1):
            self.stats.repeats += 1
            return
        self._last_seq[card.machine] = card.seq
        try:
            self._queue.put_nowait(card)
        except asyncio.QueueFull:
            self.stats.dropped += 1
            log.error("%s: card %s dropped: the card desk is behind", card.machine, card.card)

    async def _work(self) -> None:
        while True:
            card = await self._queue.get()
            try:
                decision = await self.decide(card)
            except Exception:  # the database away: logged, the desk carries on
                self.stats.failed += 1
                log.exception("%s: card %s not decided", card.machine, card.card)
                continue
            if self.on_decision is not None:
                self.on_decision(decision)

    async def decide(self, card: codec.Card) -> CardDecision:
        at = self.clock()
        walkup: WalkupDecision | None = None
        async with self.sessionmaker() as session, session.begin():
            decision = await card_at_machine(
                session,
                machine=card.machine,
                card=card.card,
                action=card.action.value,
                at=at,
                venue_zone=self.venue_zone,
                minimum_age=self.minimum_age,
            )
            if decision.outcome == ACCEPTED and decision.player_id is not None:
                walkup = await walkup_at_card_in(
                    session, machine=card.machine, card=card.card,
                    player_id=decision.player_id, at=at,
                )  # fmt: skip
        self.stats.decided += 1
        level = logging.WARNING if decision.outcome in (REFUSED, NOT_REGISTERED) else logging.INFO
        log.log(level, "%s", decision.line)
        refused = decision.outcome in (REFUSED, NOT_REGISTERED)
        if refused and decision.action == CARD_IN and card.display:
            await self._show(card.machine, decision.display)
        if walkup is not None:
            self.stats.walkups += 1
            log.log(
                logging.WARNING if walkup.verdict.kind == REFUSE else logging.INFO,
                "%s", walkup.line,
            )  # fmt: skip
            if card.display:
                await self._show(card.machine, walkup.verdict.display)
            if self.on_walkup is not None:
                self.on_walkup(walkup)
        return decision

    async def _show(self, machine: str, text: str) -> None:
        message = CommandMessage(
            id=f"card-{uuid.uuid4().hex[:12]}",
            cmd=Command.SHOW_MESSAGE,
            at=self.clock(),
            args={"text": text, "seconds": MESSAGE_SECONDS},
        )
        topic = board_topic(self.site, machine, Channel.CMD)
        await self.session.publish(topic, codec.encode(message))
        self.stats.messages += 1

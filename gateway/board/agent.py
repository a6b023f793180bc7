"""The running interface-board agent: a SAS event loop and the shared MQTT board core.

Theory of operation:

* **Two loops, one EGM.**  The MQTT core runs the gateway's commands one at a time on
  the driver; the event loop here drains the EGM's exception queue (general polls,
  until 00) every ``poll_interval`` seconds, the SAS cadence.  The SAS client serialises
  the two on the line (one message at a time, the 200 ms spacing between polls).
* **Events** become board events in order (door, power, tilt, handpay, games); after a
  drain that ended a game the credit meter (and, in a heat, the heat's meters) is read
  once, so the retained ``meters`` topic follows every game.  Malfunction codes pass the
  SAS driver's confirmation gate first (one flipped bit does not void a seat).
* **Broker away.**  The core keeps events queued (bounded, oldest dropped with a counted
  gap) and the SAS loop carries on; on reconnect everything queued goes out in order.
* **EGM away.**  A drain that fails is logged once and retried with a bounded back-off
  (up to ``max_backoff`` s); commands meanwhile get no reply (the gateway retries and
  then treats the machine as malfunctioned, rule 20).
* **Players' cards.**  With a card reader (:mod:`gateway.board.cards`) every card read
  goes through the card slot and is published as ``card-in`` / ``card-out`` on the
  ``card`` channel; the gateway applies T1-T3.  A SAS board has no display line, so its
  cards say ``display: false`` and the gateway shows a refusal on the console only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from gateway.board.cards import CardSlot, ReaderSpec, ReaderStats, read_cards
from gateway.board.clock import GatewayClock
from gateway.board.egm import EgmMachine
from gateway.machines.driver import DriverError, MachineDriver, MachineEventKind
from protocols.mqtt.board import EVENT_QUEUE, BoardCore
from protocols.mqtt.client import MqttSettings
from protocols.mqtt.codec import BoardEventKind, ReaderKind

log = logging.getLogger(__name__)

POLL_INTERVAL = 0.2  # seconds between exception drains (the SAS poll cadence)
MAX_BACKOFF = 5.0


class BoardAgent:
    def __init__(
        self,
        board_id: str,
        driver: MachineDriver,
        settings: MqttSettings,
        site: str,
        *,
        clock: GatewayClock | None = None,
        poll_interval: float = POLL_INTERVAL,
        max_backoff: float = MAX_BACKOFF,
        event_queue: int = EVENT_QUEUE,
        card_reader: ReaderSpec | None = None,
    ) -> None:
        if poll_interval <= 0:
            raise ValueError("poll interval must be > 0 seconds")
        self.driver = driver
        self.clock = clock or GatewayClock()
        self.egm = EgmMachine(board_id, driver, self.clock)
        self.core = BoardCore(self.egm, settings, site, event_queue=event_queue)
        self.egm.attach(self._emit)
        self.poll_interval = poll_interval
        self.max_backoff = max_backoff
        self.egm_up = False
        self.drains = 0
        self.drain_failures = 0
        self._loop: asyncio.Task[None] | None = None
        self.card_reader = card_reader if card_reader and card_reader.kind != "none" else None
        self.card_slot = CardSlot()
        self.reader_stats = ReaderStats()
        self._cards: asyncio.Task[None] | None = None

    def card_read(self, card: str) -> None:
        """One card number from the reader: card-in / card-out as the slot decides."""
        reader = self.card_reader.reader if self.card_reader else ReaderKind.MAGSTRIPE
        for change in self.card_slot.read(card):
            self.core.post_card(change.action, change.card, reader)

    def _emit(self, kind: BoardEventKind, meters: bool) -> None:
        self.core.post_event(kind, meters=meters)

    # -- lifecycle ---------------------------------------------------------------------
    async def start(self, *, wait_for_broker: bool = True) -> None:
        """Start the SAS loop and the MQTT core.  The EGM need not answer yet (the loop
        keeps trying); the broker must answer if ``wait_for_broker``, else
        :class:`~protocols.mqtt.client.MqttUnavailable`."""
        self._loop = asyncio.create_task(self._sas_loop(), name=f"sas-{self.egm.machine_id}")
        if self.card_reader is not None:
            self._cards = asyncio.create_task(
                read_cards(self.card_reader, self.card_read, self.reader_stats),
                name=f"cards-{self.egm.machine_id}",
            )
        try:
            await self.core.start(wait=wait_for_broker)
        except BaseException:
            await self._stop_loop()
            raise

    async def stop(self, *, crash: bool = False) -> None:
        await self._stop_loop()
        await self.core.stop(crash=crash)
        await self.driver.close()

    async def _stop_loop(self) -> None:
        for task in (self._loop, self._cards):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._loop = self._cards = None

    # -- SAS -> board ------------------------------------------------------------------
    async def _sas_loop(self) -> None:
        backoff = self.poll_interval
        while True:
            try:
                await self.drain()
                backoff = self.poll_interval
            except DriverError as exc:
                self.drain_failures += 1
                if self.egm_up:
                    log.warning("%s: EGM not answering (%s)", self.egm.machine_id, exc)
                self.egm_up = False
                backoff = min(backoff * 2, self.max_backoff)
            except Exception:  # a bug: logged with its traceback, the loop carries on
                self.drain_failures += 1
                log.exception("%s: exception drain failed", self.egm.machine_id)
                backoff = min(backoff * 2, self.max_backoff)
            await asyncio.sleep(backoff)

    async def drain(self) -> None:
        """One drain of the EGM's exceptions, published as board events."""
        if not self.egm_up:
            await self.driver.open()
            await self.egm.refresh()  # the credit meter, before anything is reported
            log.info("%s: EGM answering", self.egm.machine_id)
            self.egm_up = True
            self.core.touch(meters=True)
        events = await self.driver.poll_events()
        self.drains += 1
        game_ended = False
        for event in events:
            kind = self.egm.apply(event)
            game_ended |= event.kind is MachineEventKind.GAME_ENDED
            if kind is not None:
                self.core.post_event(kind)
        if game_ended:
            await self.egm.refresh()  # meters after every game (docs/mqtt.md)
            self.core.touch(meters=True)

"""The gateway's half of bank-wide commands (:mod:`protocols.mqtt.bank`).

The heat runner fires the prepared unlocks (or locks) of a bank in one tight loop of
triggers (:mod:`gateway.heats.floor_actions`).  Each MQTT driver's trigger names its
board in the open :class:`BankBatch` of its site; the first one schedules the batch's
publish for the loop's next turn, so every share fired in that loop leaves in one
message.  A share fired after the batch left goes to its board alone.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import UTC, datetime

from protocols.mqtt.bank import BankCommand, bank_topic, encode_bank
from protocols.mqtt.client import MqttSession, MqttUnavailable
from protocols.mqtt.codec import Command

log = logging.getLogger(__name__)

# How long a board named in a bank-wide command has to answer it before it is sent the
# same command (same id) alone: boards answer in milliseconds, a bank of 200 within
# ~0.1 s near idle; a board that missed the bank's publish starts at most this late.
BANK_DEADLINE = 0.5


class BankBatch:
    """One bank-wide command in the making."""

    __slots__ = ("_batches", "cmd", "fired", "id", "sent", "site")

    def __init__(self, batches: BankBatches, site: str, cmd: Command) -> None:
        self._batches, self.site, self.cmd = batches, site, cmd
        self.id = uuid.uuid4().hex
        self.fired: dict[str, int] = {}  # machine -> its place: its share's number
        self.sent = False

    def fire(self, machine: str) -> int | None:
        """Name ``machine`` in the publish (sent on the loop's next turn) and return its
        number; None if the batch already left or names it (the caller sends that board
        its own)."""
        if self.sent or machine in self.fired:
            return None
        if not self.fired:
            asyncio.get_running_loop().call_soon(self._batches.send, self)
        number = self.fired[machine] = len(self.fired)
        return number


class BankBatches:
    """The open batch per site and command on one broker session."""

    def __init__(self, session: MqttSession) -> None:
        self.session = session
        self.publishes = 0  # bank-wide commands sent (one each for a bank's start/end)
        self._open: dict[tuple[str, Command], BankBatch] = {}

    def batch(self, site: str, cmd: Command) -> BankBatch:
        """The bank-wide ``cmd`` being gathered for ``site``: the drivers prepared before
        it leaves join it, and every one fired in the same pass of the event loop goes
        out in its one publish."""
        key = (site, cmd)
        batch = self._open.get(key)
        if batch is None or batch.sent:
            batch = self._open[key] = BankBatch(self, site, cmd)
        return batch

    def send(self, batch: BankBatch) -> None:
        batch.sent = True
        if self._open.get((batch.site, batch.cmd)) is batch:
            del self._open[(batch.site, batch.cmd)]
        message = BankCommand(
            id=batch.id, cmd=batch.cmd, at=datetime.now(UTC), targets=tuple(batch.fired)
        )
        try:
            # QoS 0: the fast path; a board that misses it gets its own (QoS 1) command.
            # Written at once: not behind the callbacks the runner has queued meanwhile.
            self.session.publish_now(
                bank_topic(batch.site), encode_bank(message), qos=0, flush=True
            )
        except MqttUnavailable as exc:
            log.info("bank-wide %s not sent (%s); boards get theirs alone", batch.cmd.value, exc)
            return
        self.publishes += 1

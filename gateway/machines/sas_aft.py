"""The SAS driver's AFT host: registration, lock, restricted transfers and the sweep.

A real EGM moves funds only for the host registered with it (SAS 6.02 §8):

1. **Asset number and registration** (LP 73 FF): the EGM names its asset number (LP 74
   as a fallback) and the host it is registered to.  Already ours (the floor's key and
   POS ID): nothing to do.  Not registered, or registered under our POS ID with an old
   key: LP 73 00 (initialize) then 01 (register) with the asset number, key and POS ID;
   a reply of 40 means the attendant must acknowledge at the machine, read back (LP 73
   FF) a bounded number of times.  Registered to *another* POS ID: refused, never taken
   over -- that is the casino's own transfer host.  Asset number 0: refused (no EGM
   transfers for asset 0; status 93).
2. **Lock** (LP 74 00) for the direction of the transfer; a "lock pending" (a game
   finishing) is interrogated (LP 74 FF) a bounded number of times.
3. **Transfer** (LP 72) of restricted credits only, with a unique transaction ID, the
   asset number, the registration key, an expiration (days) and a pool ID.  Status 40
   (pending): interrogate (LP 72 FF) until final, bounded.  A lost reply: interrogate;
   if the EGM's last transaction is ours, its status is the answer, else the timeout
   stands (the transfer never arrived).  Every other status is a
   :class:`~gateway.machines.driver.MachineRefused` naming it (93: the asset numbers
   sent and read; 88 / 89: the registration is read again on the next call).
4. **Sweep** (LP 72 type 80, from the machine to the host) of whatever is on the
   meters at the end (a win on restricted play lands on the cashable meter of a real
   EGM), with the pool ID the EGM reports for its restricted credits.

Nothing here catches :class:`~protocols.sas.client.SasClientError`: the driver maps link
errors onto its own as for every other poll.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from gateway.machines.capabilities import AftRegistration, PrizeMachineState, PrizeTransferResult
from gateway.machines.driver import MachineRefused, ProtocolFault
from protocols.sas import (
    AftLockCode,
    AftLockStatus,
    AftRegistrationCode,
    AftRegistrationReply,
    AftRegistrationStatus,
    AftStatusReply,
    AftTransfer,
    AftTransferReply,
    AftTransferStatus,
    AftTransferType,
    TransferOutcome,
    describe_registration_status,
    describe_transfer_status,
    transfer_outcome,
)
from protocols.sas.aft import TRANSFER_FROM_MACHINE_OK, TRANSFER_TO_MACHINE_OK
from protocols.sas.aft_registration import REGISTRATION_KEY_BYTES
from protocols.sas.client import SasClient, SasTimeout

DONE, REFUSED, PENDING, NOT_SEEN, DUPLICATE, ODD = (
    "done",
    "refused",
    "pending",
    "not seen",
    "duplicate",
    "odd",
)

PENDING_READS = 25  # LP 72 interrogations of a pending transfer (~5 s at 200 ms)
LOCK_READS = 15  # LP 74 interrogations of a pending lock (~3 s)
ACK_READS = 10  # LP 73 reads waiting for the attendant's acknowledgement (~2 s)
EXPIRATION_DAYS = 1  # restricted credits expire a day after loading (0000NNNN form)
LOCK_TIMEOUT_CS = 500  # LP 74 lock held for 5 s at most
_REREGISTER = frozenset(
    (
        AftTransferStatus.NOT_REGISTERED,
        AftTransferStatus.REGISTRATION_KEY_MISMATCH,
        AftTransferStatus.ASSET_NUMBER_MISMATCH,
    )
)
NOT_CONFIGURED = (
    "no aft_registration_key / aft_pos_id for this machine or its bank in the floor file"
)


@dataclass(frozen=True, slots=True)
class AftHost:
    """Who we are to the EGM: the floor's registration key and POS ID, and the pool our
    restricted credits belong to."""

    registration_key: bytes
    pos_id: int
    pool_id: int = 0

    @classmethod
    def from_floor(cls, key_hex: str, pos_id: int) -> AftHost:
        key = bytes.fromhex(key_hex)
        if len(key) != REGISTRATION_KEY_BYTES or not any(key):
            raise ValueError("AFT registration key must be 40 hex digits, not all zero")
        if not 1 <= pos_id <= 0xFFFFFFFF:
            raise ValueError("AFT POS ID must be 1..4294967295")
        return cls(key, pos_id)


def _taken(asset: int, reply: AftRegistrationReply) -> AftRegistration:
    """Registered to another host: never taken over (that is the casino's AFT host)."""
    return AftRegistration(
        asset,
        False,
        "refused",
        reply.pos_id,
        f"registered to another AFT host (POS ID {reply.pos_id}); unregister it at "
        "the machine, or give this machine that host's key and POS ID",
    )


def prize_reading(reply: AftTransferReply, sent_id: str, cents: int) -> PrizeTransferResult:
    """What an LP 72 reply (to the transfer, or an interrogation) says of prize transfer
    ``sent_id`` of ``cents`` restricted cents (docs/rules.md#p5)."""
    status = reply.transfer_status
    named = describe_transfer_status(status)
    if status == AftTransferStatus.DUPLICATE_TRANSACTION_ID:
        return PrizeTransferResult(DUPLICATE, status, f"AFT transaction {sent_id}: {named}")
    if reply.transaction_id != sent_id:
        last = reply.transaction_id or "none"
        return PrizeTransferResult(
            NOT_SEEN, status, f"the machine's last AFT transfer is {last} ({named})"
        )
    outcome = transfer_outcome(status)
    if outcome is TransferOutcome.PENDING:
        return PrizeTransferResult(PENDING, status, f"AFT transaction {sent_id}: {named}")
    if outcome is TransferOutcome.DONE:
        moved = reply.restricted_cents + reply.cashable_cents + reply.nonrestricted_cents
        if status != AftTransferStatus.FULL_TRANSFER_OK or moved != cents:
            return PrizeTransferResult(
                ODD, status, f"AFT transaction {sent_id}: {named}, {moved} of {cents} cents"
            )
        return PrizeTransferResult(DONE, status, f"AFT transaction {sent_id}: {cents} cents")
    return PrizeTransferResult(REFUSED, status, f"AFT transfer {sent_id} refused ({named})")


def transaction_id() -> str:
    """A fresh LP 72 transaction ID: 20 ASCII characters, unique per transfer."""
    return f"RG{uuid.uuid4().hex[:18]}"


class AftSession:
    """One machine's AFT host state (its asset number once registered) and procedures."""

    def __init__(self, machine_id: str, host: AftHost | None = None) -> None:
        self.machine_id = machine_id
        self.host = host
        self.asset_number: int | None = None  # set once registered to us

    def _refused(self, why: str) -> MachineRefused:
        return MachineRefused(f"machine {self.machine_id}: {why}")

    # -- registration --------------------------------------------------------------------
    async def register(self, c: SasClient) -> AftRegistration:
        reply = await c.aft_registration()
        asset = reply.asset_number or (await c.aft_status()).asset_number
        if asset == 0:
            return AftRegistration(
                0, False, "refused", reason="asset number is 0: set it in the operator menu"
            )
        host = self.host
        if host is None:
            return AftRegistration(asset, reply.registered, "not configured", reason=NOT_CONFIGURED)
        if reply.registered and reply.pos_id != host.pos_id:
            return _taken(asset, reply)
        if not self._ours(reply) and reply.status is not AftRegistrationStatus.PENDING:
            reply = await self._register(c, asset, host)
        for _ in range(ACK_READS):
            if reply.status is not AftRegistrationStatus.PENDING:
                break
            reply = await c.aft_registration()
        return self._result(asset, reply)

    def _ours(self, reply: AftRegistrationReply) -> bool:
        host = self.host
        return (
            host is not None
            and reply.registered
            and reply.registration_key == host.registration_key
            and reply.pos_id == host.pos_id
        )

    async def _register(self, c: SasClient, asset: int, host: AftHost) -> AftRegistrationReply:
        key, pos = host.registration_key, host.pos_id
        ready = await c.aft_register(AftRegistrationCode.INITIALIZE, asset, key, pos)
        if ready.status is not AftRegistrationStatus.READY:
            return ready  # refused: reported by _result
        return await c.aft_register(AftRegistrationCode.REGISTER, asset, key, pos)

    def _result(self, asset: int, reply: AftRegistrationReply) -> AftRegistration:
        if self._ours(reply):
            self.asset_number = asset
            return AftRegistration(asset, True, "registered", reply.pos_id)
        self.asset_number = None
        if reply.registered:  # someone else's registration completed meanwhile
            return _taken(asset, reply)
        if reply.status is AftRegistrationStatus.PENDING:
            return AftRegistration(
                asset,
                False,
                "pending",
                reason="registration waits for the operator's acknowledgement at the machine",
            )
        return AftRegistration(
            asset,
            False,
            "refused",
            reason="the machine refused AFT registration "
            f"({describe_registration_status(reply.registration_status)})",
        )

    async def ensure_registered(self, c: SasClient) -> tuple[int, AftHost]:
        """The asset number to send and our host identity; MachineRefused with the reason
        if the machine is not registered to us and will not be."""
        host = self.host
        if self.asset_number is not None and host is not None:
            return self.asset_number, host
        result = await self.register(c)
        if not result.registered or host is None:
            raise self._refused(f"AFT registration {result.status}: {result.reason}")
        return result.asset_number, host

    # -- lock ----------------------------------------------------------------------------
    async def lock(self, c: SasClient, condition: int) -> AftStatusReply:
        status = await c.aft_status(
            AftLockCode.REQUEST_LOCK, condition=condition, timeout_cs=LOCK_TIMEOUT_CS
        )
        for _ in range(LOCK_READS):
            if status.game_lock_status != AftLockStatus.LOCK_PENDING:
                break
            status = await c.aft_status()
        if not status.locked:
            raise self._refused(
                f"AFT lock not granted (game lock status {status.game_lock_status:02X})"
            )
        if status.available_transfers & condition != condition:
            way = "to" if condition == TRANSFER_TO_MACHINE_OK else "from"
            raise self._refused(
                f"locked, but no transfer {way} the machine is possible "
                f"(available transfers {status.available_transfers:02X})"
            )
        return status

    # -- transfers -----------------------------------------------------------------------
    async def load_restricted(self, c: SasClient, cents: int) -> AftTransferReply:
        asset, host = await self.ensure_registered(c)
        await self.lock(c, TRANSFER_TO_MACHINE_OK)
        return await self.transfer(
            c,
            AftTransfer(
                c.address,
                transfer_type=AftTransferType.IN_HOUSE_TO_MACHINE,
                cashable_cents=0,
                restricted_cents=cents,
                nonrestricted_cents=0,
                transaction_id=transaction_id(),
                asset_number=asset,
                registration_key=host.registration_key,
                expiration=EXPIRATION_DAYS,
                pool_id=host.pool_id,
            ),
        )

    async def sweep(self, c: SasClient) -> AftTransferReply | None:
        """Every credit on the machine back to the host; None if there was nothing."""
        status = await c.aft_status()
        if not (status.cashable_cents or status.restricted_cents):
            return None
        asset, host = await self.ensure_registered(c)
        await self.lock(c, TRANSFER_FROM_MACHINE_OK)
        return await self.transfer(
            c,
            AftTransfer(
                c.address,
                transfer_type=AftTransferType.IN_HOUSE_TO_HOST,
                cashable_cents=status.cashable_cents,
                restricted_cents=status.restricted_cents,
                nonrestricted_cents=0,
                transaction_id=transaction_id(),
                asset_number=asset,
                registration_key=host.registration_key,
                pool_id=status.restricted_pool_id,
            ),
        )

    async def transfer(self, c: SasClient, sent: AftTransfer) -> AftTransferReply:
        """Send ``sent`` and follow it to its final status (module docstring, step 3)."""
        try:
            reply = await c.aft_send(sent)
        except SasTimeout:
            reply = await c.aft_interrogate()
            if reply.transaction_id != sent.transaction_id:
                raise  # the EGM never saw it: the caller's retry sends a fresh one
        for _ in range(PENDING_READS):
            if transfer_outcome(reply.transfer_status) is not TransferOutcome.PENDING:
                break
            reply = await c.aft_interrogate()
        return self._final(sent, reply)

    def _final(self, sent: AftTransfer, reply: AftTransferReply) -> AftTransferReply:
        status = reply.transfer_status
        if status == AftTransferStatus.NO_INFORMATION:
            raise self._refused(f"no record of AFT transaction {sent.transaction_id} (status FF)")
        if reply.transaction_id != sent.transaction_id:
            raise ProtocolFault(
                f"machine {self.machine_id}: LP 72 reply for transaction "
                f"{reply.transaction_id!r}, sent {sent.transaction_id!r}"
            )
        if status == AftTransferStatus.FULL_TRANSFER_OK:
            return reply
        if status in _REREGISTER:
            self.asset_number = None  # read the registration again next time
        named = describe_transfer_status(status)
        if status == AftTransferStatus.ASSET_NUMBER_MISMATCH:
            raise self._refused(
                f"AFT transfer refused ({named}: sent asset number {sent.asset_number})"
            )
        if transfer_outcome(status) is TransferOutcome.PENDING:
            raise self._refused(
                f"AFT transaction {sent.transaction_id} still pending after "
                f"{PENDING_READS} interrogations"
            )
        raise self._refused(f"AFT transfer {sent.transaction_id} refused ({named})")

    # -- prizes to the machine (docs/rules.md#p3 to #p5) --------------------------------
    async def prize_state(self, c: SasClient) -> PrizeMachineState:
        """P3's facts from the machine: AFT (capable and registered to us), transfers to
        it possible now (LP 74 available transfers), a game finishing or a lock held."""
        if not (await c.capabilities()).aft:
            return PrizeMachineState(False, False, False, why_not_aft="no AFT (LP A0)")
        try:
            await self.ensure_registered(c)
        except MachineRefused as exc:
            return PrizeMachineState(False, False, False, why_not_aft=str(exc))
        status = await c.aft_status()
        return PrizeMachineState(
            aft=True,
            locked=not status.available_transfers & TRANSFER_TO_MACHINE_OK,
            busy=status.game_lock_status == AftLockStatus.LOCK_PENDING,
            limit_cents=status.transfer_limit_cents or None,
        )

    async def credit_prize(
        self, c: SasClient, sent_id: str, cents: int, expiration_days: int
    ) -> PrizeTransferResult:
        """Lock (LP 74) and send (LP 72) ``cents`` of restricted promotional credits under
        the journaled ``sent_id``; a lost reply is read back (LP 72 FF), a pending one
        interrogated a bounded number of times."""
        asset, host = await self.ensure_registered(c)
        await self.lock(c, TRANSFER_TO_MACHINE_OK)
        sent = AftTransfer(
            c.address,
            transfer_type=AftTransferType.IN_HOUSE_TO_MACHINE,
            cashable_cents=0,
            restricted_cents=cents,
            nonrestricted_cents=0,
            transaction_id=sent_id,
            asset_number=asset,
            registration_key=host.registration_key,
            expiration=expiration_days,
            pool_id=host.pool_id,
        )
        try:
            reply = await c.aft_send(sent)
        except SasTimeout:
            reply = await c.aft_interrogate()
        result = prize_reading(reply, sent_id, cents)
        for _ in range(PENDING_READS):
            if result.reading != PENDING:
                break
            result = prize_reading(await c.aft_interrogate(), sent_id, cents)
        if result.egm_status in _REREGISTER:
            self.asset_number = None
        return result

    async def read_prize_transfer(
        self, c: SasClient, sent_id: str, cents: int
    ) -> PrizeTransferResult:
        """The machine's last transfer (LP 72 FF) as it bears on ``sent_id``."""
        return prize_reading(await c.aft_interrogate(), sent_id, cents)

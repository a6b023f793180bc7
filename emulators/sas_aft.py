"""The emulated EGM's AFT: registration (LP 73), game lock (LP 74) and transfers (LP 72).

Strict by default, as a real EGM: a transfer must carry this EGM's asset number (status
93 otherwise, asset 0 included), come from the registered host (88 when no host is) with
its registration key (89).  Registration follows SAS 6.02 §8: 00 initialize -> ready,
then 01 register with the EGM's own asset number -> registered (a wrong asset number
leaves it not registered), 40 -> pending until the attendant acknowledges
(:meth:`EgmAft.acknowledge`), 80 unregister.  The state is the EGM's NV memory: it
outlives connections and power cycles.

:class:`AftSettings` models other machines: ``lax`` accepts any asset number and no
registration (the older emulator, and some EGMs configured that way), ``registration``
makes the EGM refuse every registration (``refuse``) or wait for an acknowledgement that
never comes unless given (``await-ack``), ``pending_reads`` keeps each transfer pending
(status 40) for that many interrogations before it completes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from collections.abc import Callable

from emulators.machine import EmulatedMachine, MachineRefusal
from protocols.sas import (
    AftInterrogate,
    AftLockCode,
    AftLockRequest,
    AftLockStatus,
    AftRegister,
    AftRegistrationCode,
    AftRegistrationReply,
    AftRegistrationStatus,
    AftStatusReply,
    AftTransfer,
    AftTransferCode,
    AftTransferReply,
    AftTransferStatus,
    AftTransferType,
    SasException,
)
from protocols.sas.aft import (
    AFT_STATUS_ANY_ENABLED,
    AFT_STATUS_IN_HOUSE_ENABLED,
    AFT_STATUS_REGISTERED,
    TRANSFER_FROM_MACHINE_OK,
    TRANSFER_TO_MACHINE_OK,
)
from protocols.sas.aft_registration import NO_KEY
from protocols.sas.denominations import cents_per_credit

_S = AftTransferStatus
_REG = AftRegistrationStatus


class RegistrationMode(enum.Enum):
    ACCEPT = "accept"
    REFUSE = "refuse"  # every registration is answered "not registered"
    AWAIT_ACK = "await-ack"  # registration stays pending until acknowledge()


@dataclasses.dataclass(slots=True)
class AftSettings:
    asset_number: int = 1
    lax: bool = False
    registration: RegistrationMode = RegistrationMode.ACCEPT
    pending_reads: int = 0


@dataclasses.dataclass(slots=True)
class _Pending:
    poll: AftTransfer
    reads_left: int


class EgmAft:
    """One EGM's AFT state and answers (no I/O); ``post`` queues an exception code."""

    def __init__(
        self,
        machine: EmulatedMachine,
        address: int,
        wall_clock: Callable[[], dt.datetime],
        settings: AftSettings | None = None,
        post: Callable[[int], None] = lambda code: None,
    ) -> None:
        self.machine = machine
        self.address = address
        self.wall_clock = wall_clock
        self.settings = settings or AftSettings()
        self.post = post
        self.registration = _REG.NOT_REGISTERED
        self.key = NO_KEY
        self.pos_id = 0
        self.locked = False
        self.lock_pending = False
        self.restricted_pool = 0
        self.restricted_expiration = 0
        self.last: AftTransferReply | None = None
        self._pending: _Pending | None = None
        # Cumulative AFT meters (cents: cashable, restricted, non-restricted) by transfer
        # type, reported in every LP 72 reply (SAS 6.02); NV memory on a real EGM.
        self.meters: dict[int, tuple[int, int, int]] = {}

    @property
    def registered(self) -> bool:
        return self.registration is _REG.REGISTERED

    # -- LP 73 ---------------------------------------------------------------------------
    def register(self, poll: AftRegister) -> AftRegistrationReply:
        code = poll.registration_code
        refuse = self.settings.registration is RegistrationMode.REFUSE
        if code == AftRegistrationCode.UNREGISTER:
            self._set(_REG.NOT_REGISTERED)
        elif code == AftRegistrationCode.INITIALIZE:
            self._set(_REG.NOT_REGISTERED if refuse else _REG.READY)
        elif code in (AftRegistrationCode.REGISTER, AftRegistrationCode.REQUEST_OPERATOR_ACK):
            self._register(poll, ack=code == AftRegistrationCode.REQUEST_OPERATOR_ACK)
        return AftRegistrationReply(
            self.address, self.registration, self.settings.asset_number, self.key, self.pos_id
        )

    def _set(self, status: AftRegistrationStatus, key: bytes = NO_KEY, pos_id: int = 0) -> None:
        self.registration, self.key, self.pos_id = status, key, pos_id

    def _register(self, poll: AftRegister, *, ack: bool) -> None:
        s = self.settings
        allowed = s.lax or (
            self.registration in (_REG.READY, _REG.REGISTERED)
            and poll.asset_number == s.asset_number
        )
        if s.registration is RegistrationMode.REFUSE or not allowed:
            self._set(_REG.NOT_REGISTERED)
        elif ack or s.registration is RegistrationMode.AWAIT_ACK:
            self._set(_REG.PENDING, poll.registration_key, poll.pos_id)
        else:
            self._set(_REG.REGISTERED, poll.registration_key, poll.pos_id)

    def acknowledge(self) -> bool:
        """The attendant accepts a pending registration at the machine (exception 6D)."""
        if self.registration is not _REG.PENDING:
            return False
        self.registration = _REG.REGISTERED
        self.post(SasException.AFT_REGISTRATION_ACKNOWLEDGED)
        return True

    # -- LP 74 ---------------------------------------------------------------------------
    def lock(self, poll: AftLockRequest) -> AftStatusReply:
        m = self.machine
        if poll.lock_code == AftLockCode.REQUEST_LOCK:
            self.locked = m.powered and not m.game_in_progress
            self.lock_pending = m.powered and m.game_in_progress
        elif poll.lock_code == AftLockCode.CANCEL_LOCK:
            self.locked = self.lock_pending = False
        elif self.lock_pending and not m.game_in_progress:
            self.locked, self.lock_pending = True, False  # the game ended: lock granted
            self.post(SasException.GAME_LOCKED)
        return self.status()

    def status(self) -> AftStatusReply:
        m = self.machine
        c = self._cents()
        idle = m.tournament is None
        if self.locked:
            lock = AftLockStatus.LOCKED
        else:
            lock = AftLockStatus.LOCK_PENDING if self.lock_pending else AftLockStatus.NOT_LOCKED
        flags = AFT_STATUS_ANY_ENABLED | AFT_STATUS_IN_HOUSE_ENABLED
        return AftStatusReply(
            self.address,
            asset_number=self.settings.asset_number,
            game_lock_status=lock,
            available_transfers=(TRANSFER_TO_MACHINE_OK | TRANSFER_FROM_MACHINE_OK) if idle else 0,
            host_cashout_status=0,
            aft_status=flags | (AFT_STATUS_REGISTERED if self.registered else 0),
            max_buffer_index=1,
            cashable_cents=m.cashable_credits * c if idle else 0,
            restricted_cents=m.restricted_credits * c if idle else 0,
            nonrestricted_cents=0,
            transfer_limit_cents=99_999_999,
            restricted_expiration=self.restricted_expiration if m.restricted_credits else 0,
            restricted_pool_id=self.restricted_pool if m.restricted_credits else 0,
        )

    # -- LP 72 ---------------------------------------------------------------------------
    def interrogate(self, poll: AftInterrogate) -> AftTransferReply:
        pending = self._pending
        if pending is not None:
            pending.reads_left -= 1
            if pending.reads_left <= 0:
                self._pending = None
                self._complete(pending.poll, self._move(pending.poll))
                self.post(SasException.AFT_TRANSFER_COMPLETE)
        if self.last is None:  # no transfer yet: status FF, not silence
            return AftTransferReply.no_information(self.address, poll.transaction_index)
        return self.last

    def transfer(self, poll: AftTransfer) -> AftTransferReply:
        last = self.last
        if last is not None and last.transaction_id == poll.transaction_id:
            return last  # the same transaction again: report it, never move money twice
        if poll.transfer_code == AftTransferCode.CANCEL:
            return self._cancel(poll)
        if self._pending is not None:  # answered, but the pending one stays the last
            return self._complete(poll, _S.NOT_COMPATIBLE_WITH_CURRENT_TRANSFER, record=False)
        status = self._refusal(poll)
        if status is None and self.settings.pending_reads > 0:
            self._pending = _Pending(poll, self.settings.pending_reads)
            return self._complete(poll, _S.PENDING)
        return self._complete(poll, status if status is not None else self._move(poll))

    def _cancel(self, poll: AftTransfer) -> AftTransferReply:
        pending = self._pending
        if pending is None:
            return self._complete(poll, _S.NOT_COMPATIBLE_WITH_CURRENT_TRANSFER, record=False)
        self._pending = None
        return self._complete(pending.poll, _S.CANCELLED_BY_HOST)

    def _refusal(self, poll: AftTransfer) -> AftTransferStatus | None:
        """Why this EGM will not take ``poll`` at all, before any amount is looked at."""
        if poll.transfer_code not in (AftTransferCode.FULL_ONLY, AftTransferCode.PARTIAL_ALLOWED):
            return _S.UNSUPPORTED_TRANSFER_CODE
        if not self.settings.lax:
            if poll.asset_number != self.settings.asset_number:
                return _S.ASSET_NUMBER_MISMATCH
            if not self.registered:
                return _S.NOT_REGISTERED
            if poll.registration_key != self.key:
                return _S.REGISTRATION_KEY_MISMATCH
        m = self.machine
        if poll.restricted_cents and m.restricted_credits and poll.pool_id != self.restricted_pool:
            return _S.RESTRICTED_POOL_MISMATCH
        return None

    def _complete(
        self, poll: AftTransfer, status: AftTransferStatus, *, record: bool = True
    ) -> AftTransferReply:
        """The reply for ``poll``; ``record``: it becomes the transaction interrogations
        report, and the meters count what it moved."""
        done = status == _S.FULL_TRANSFER_OK
        moved = (
            (poll.cashable_cents, poll.restricted_cents, poll.nonrestricted_cents)
            if done
            else (0, 0, 0)
        )
        before = self.meters.get(poll.transfer_type, (0, 0, 0))
        cashable, restricted, nonrestricted = (b + x for b, x in zip(before, moved, strict=True))
        if record:
            self.meters[poll.transfer_type] = (cashable, restricted, nonrestricted)
        if done and poll.transfer_type == AftTransferType.IN_HOUSE_TO_MACHINE:
            self.restricted_pool, self.restricted_expiration = poll.pool_id, poll.expiration
        reply = AftTransferReply(
            self.address,
            buffer_position=poll.transaction_index,
            transfer_status=status,
            receipt_status=0xFF,  # no receipt requested
            transfer_type=poll.transfer_type,
            cashable_cents=moved[0],
            restricted_cents=moved[1],
            nonrestricted_cents=moved[2],
            transfer_flags=poll.transfer_flags,
            asset_number=poll.asset_number,
            transaction_id=poll.transaction_id,
            transaction_at=self.wall_clock(),
            expiration=poll.expiration,
            pool_id=poll.pool_id,
            cumulative_cashable_cents=cashable,
            cumulative_restricted_cents=restricted,
            cumulative_nonrestricted_cents=nonrestricted,
        )
        if not record:
            return reply
        self.last = reply
        if status != _S.PENDING:
            self.locked = False  # a lock lasts for one transfer
        return reply

    def _cents(self) -> int:
        return cents_per_credit(self.machine.identity.denomination_code) or 1

    def _move(self, poll: AftTransfer) -> AftTransferStatus:
        c = self._cents()
        amounts = (poll.cashable_cents, poll.restricted_cents, poll.nonrestricted_cents)
        if any(x % c for x in amounts):
            return _S.AMOUNT_NOT_MULTIPLE_OF_DENOMINATION
        cashable, restricted, nonrestricted = (x // c for x in amounts)
        try:
            if poll.transfer_type == AftTransferType.IN_HOUSE_TO_MACHINE:
                if cashable or nonrestricted or not restricted:
                    # only play-only credits may be loaded for a heat (T12, T18)
                    return _S.INVALID_AMOUNT_OR_EXPIRATION
                self.machine.transfer_in_restricted(restricted)
            elif poll.transfer_type == AftTransferType.IN_HOUSE_TO_HOST:
                if nonrestricted:
                    return _S.INVALID_AMOUNT_OR_EXPIRATION
                self.machine.transfer_out(cashable, restricted)
            else:
                return _S.INVALID_FUNCTION
        except MachineRefusal:
            return _S.UNABLE_TO_TRANSFER_NOW
        return _S.FULL_TRANSFER_OK

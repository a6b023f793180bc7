"""The emulated EGM's AFT as a real machine enforces it: asset number, registration and
key on every transfer; registration by initialize + register, the attendant's
acknowledgement, refusal; pending transfers; and the lax setting."""

from __future__ import annotations

import datetime as dt

from emulators.machine import EmulatedMachine
from emulators.sas_aft import AftSettings, EgmAft, RegistrationMode
from protocols.sas import (
    AftInterrogate,
    AftLockRequest,
    AftRegister,
    AftRegistrationStatus,
    AftTransfer,
    AftTransferCode,
    AftTransferStatus,
    AftTransferType,
    SasException,
)
from protocols.sas.aft import AFT_STATUS_REGISTERED

KEY = bytes(range(1, 21))
ASSET = 4711


def egm(**settings: object) -> tuple[EgmAft, list[int]]:
    posted: list[int] = []
    machine = EmulatedMachine("A1", seed=1, tournament_supported=False)
    aft = EgmAft(
        machine,
        1,
        lambda: dt.datetime(2026, 12, 1, 14, 0, 0),
        AftSettings(asset_number=ASSET, **settings),  # type: ignore[arg-type]
        post=posted.append,
    )
    return aft, posted


def register(aft: EgmAft, asset: int = ASSET, code: int = 0x01) -> AftRegistrationStatus:
    aft.register(AftRegister(1, 0x00, asset, KEY, 77))
    reply = aft.register(AftRegister(1, code, asset, KEY, 77))
    return AftRegistrationStatus(reply.registration_status)


def load(tid: str, asset: int = ASSET, key: bytes = KEY, cents: int = 500) -> AftTransfer:
    return AftTransfer(
        1,
        transfer_type=AftTransferType.IN_HOUSE_TO_MACHINE,
        cashable_cents=0,
        restricted_cents=cents,
        nonrestricted_cents=0,
        transaction_id=tid,
        asset_number=asset,
        registration_key=key,
        expiration=1,
    )


def test_read_names_the_asset_number_of_an_unregistered_machine() -> None:
    aft, _ = egm()
    reply = aft.register(AftRegister.read(1))
    assert reply.status is AftRegistrationStatus.NOT_REGISTERED
    assert reply.asset_number == ASSET
    assert reply.registration_key == bytes(20)
    assert aft.status().asset_number == ASSET
    assert not aft.status().aft_status & AFT_STATUS_REGISTERED


def test_a_transfer_needs_the_asset_number_then_the_registration_then_the_key() -> None:
    aft, _ = egm()
    # the gateway's old transfer: asset number 0 and an all-zero key
    assert aft.transfer(load("T1", asset=0, key=bytes(20))).transfer_status == 0x93
    assert aft.transfer(load("T2")).transfer_status == AftTransferStatus.NOT_REGISTERED
    assert register(aft) is AftRegistrationStatus.REGISTERED
    assert aft.status().aft_status & AFT_STATUS_REGISTERED
    assert aft.transfer(load("T3", key=bytes(20))).transfer_status == 0x89
    assert aft.transfer(load("T4", asset=ASSET + 1)).transfer_status == 0x93
    assert aft.machine.restricted_credits == 0
    assert aft.transfer(load("T5")).transfer_status == AftTransferStatus.FULL_TRANSFER_OK
    assert aft.machine.restricted_credits == 500


def test_register_with_another_asset_number_or_without_initialize_is_not_registered() -> None:
    aft, _ = egm()
    assert register(aft, asset=ASSET + 1) is AftRegistrationStatus.NOT_REGISTERED
    reply = aft.register(AftRegister(1, 0x01, ASSET, KEY, 77))  # no 00 first
    assert reply.status is AftRegistrationStatus.NOT_REGISTERED
    assert register(aft) is AftRegistrationStatus.REGISTERED
    assert aft.register(AftRegister(1, 0x80)).status is AftRegistrationStatus.NOT_REGISTERED
    assert aft.transfer(load("T1")).transfer_status == AftTransferStatus.NOT_REGISTERED


def test_a_refusing_machine_never_registers() -> None:
    aft, _ = egm(registration=RegistrationMode.REFUSE)
    first = aft.register(AftRegister(1, 0x00, ASSET, KEY, 77))
    assert first.status is AftRegistrationStatus.NOT_REGISTERED
    assert register(aft) is AftRegistrationStatus.NOT_REGISTERED


def test_operator_acknowledgement_completes_a_pending_registration() -> None:
    aft, posted = egm(registration=RegistrationMode.AWAIT_ACK)
    assert register(aft) is AftRegistrationStatus.PENDING
    assert aft.transfer(load("T1")).transfer_status == AftTransferStatus.NOT_REGISTERED
    assert aft.acknowledge()
    assert posted == [SasException.AFT_REGISTRATION_ACKNOWLEDGED]
    reply = aft.register(AftRegister.read(1))
    assert (reply.status, reply.pos_id, reply.registration_key) == (
        AftRegistrationStatus.REGISTERED,
        77,
        KEY,
    )
    assert not aft.acknowledge()  # nothing pending any more


def test_code_40_asks_for_the_acknowledgement_even_on_an_accepting_machine() -> None:
    aft, _ = egm()
    assert register(aft, code=0x40) is AftRegistrationStatus.PENDING


def test_a_pending_transfer_completes_after_interrogations_and_can_be_cancelled() -> None:
    aft, posted = egm(pending_reads=2)
    register(aft)
    assert aft.transfer(load("T1")).transfer_status == AftTransferStatus.PENDING
    assert aft.machine.restricted_credits == 0
    assert aft.transfer(load("T2")).transfer_status == 0xC0  # one transfer at a time
    assert aft.interrogate(AftInterrogate(1)).transfer_status == AftTransferStatus.PENDING
    done = aft.interrogate(AftInterrogate(1))
    assert (done.transaction_id, done.transfer_status) == ("T1", 0x00)
    assert aft.machine.restricted_credits == 500
    assert posted == [SasException.AFT_TRANSFER_COMPLETE]
    assert aft.transfer(load("T3")).transfer_status == AftTransferStatus.PENDING
    cancel = AftTransfer(
        1, 0, 0, 0, 0, "T4", ASSET, transfer_code=AftTransferCode.CANCEL, registration_key=KEY
    )
    cancelled = aft.transfer(cancel)
    assert (cancelled.transaction_id, cancelled.transfer_status) == ("T3", 0x80)
    assert aft.machine.restricted_credits == 500


def test_restricted_credits_of_another_pool_are_refused() -> None:
    aft, _ = egm()
    register(aft)
    assert aft.transfer(load("T1")).transfer_status == 0x00
    other = AftTransfer(1, 0, 0, 100, 0, "T2", ASSET, registration_key=KEY, pool_id=5)
    assert aft.transfer(other).transfer_status == AftTransferStatus.RESTRICTED_POOL_MISMATCH


def test_a_lock_during_a_game_is_pending_until_the_game_ends() -> None:
    now = [1000.0]
    machine = EmulatedMachine("A1", seed=1, clock=lambda: now[0], game_seconds=2.0)
    posted: list[int] = []
    aft = EgmAft(machine, 1, lambda: dt.datetime(2026, 12, 1), AftSettings(), posted.append)
    machine.insert_bill(10)
    machine.spin(1)
    assert machine.game_in_progress
    assert aft.lock(AftLockRequest(1, 0x00, 0x01, 500)).game_lock_status == 0x40
    assert aft.lock(AftLockRequest(1)).game_lock_status == 0x40  # still playing
    now[0] += 2.5
    machine.tick()
    assert aft.lock(AftLockRequest(1)).game_lock_status == 0x00
    assert posted == [SasException.GAME_LOCKED]


def test_lax_machines_take_any_asset_number_without_registration() -> None:
    aft, _ = egm(lax=True)
    assert aft.transfer(load("T1", asset=0, key=bytes(20))).transfer_status == 0x00
    assert aft.machine.restricted_credits == 500

"""The SAS driver as an AFT host against emulated EGMs that enforce AFT over TCP:
registration (and what it refuses), the lock, pending transfers followed to the end, a
lost reply settled by interrogation, status 93 named, and the sweep."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from emulators.bank import Bank, BankMachine
from emulators.sas_aft import RegistrationMode
from gateway.machines.capabilities import AftRegistrar
from gateway.machines.driver import MachineRefused
from gateway.machines.sas import SasDriver
from gateway.machines.sas_aft import NOT_CONFIGURED, AftHost
from protocols.sas import AftRegister, AftTransfer, AftTransferType, EgmMessage, HostMessage
from protocols.sas.endpoint import parse_endpoint

KEY = bytes(range(1, 21))
HOST = AftHost(KEY, 7001)


@pytest.fixture
async def bank() -> AsyncIterator[Bank]:
    async with Bank(2, seed=4, no_tournament_support=2, asset_numbers=[5001, 5002]) as b:
        yield b


def driver(b: BankMachine, host: AftHost | None = HOST) -> SasDriver:
    return SasDriver(
        b.machine.machine_id, parse_endpoint(b.endpoint), min_spacing=0.005, aft_host=host
    )


async def test_registers_once_and_names_the_asset_number(bank: Bank) -> None:
    b = bank.machines[0]
    d = driver(b)
    assert isinstance(d, AftRegistrar)
    await d.open()
    try:
        first = await d.register_aft()
        assert (first.registered, first.asset_number, first.pos_id) == (True, 5001, 7001)
        egm = b.face.answers.aft
        assert (egm.registered, egm.key, egm.pos_id) == (True, KEY, 7001)
        polls = b.face.polls_seen
        again = await d.register_aft()  # already ours: one LP 73 read, no re-registration
        assert again == first
        assert b.face.polls_seen == polls + 1
    finally:
        await d.close()


async def test_floor_values_reach_the_driver_through_use_aft_host(bank: Bank) -> None:
    b = bank.machines[0]
    d = driver(b, host=None)
    await d.open()
    try:
        unconfigured = await d.register_aft()
        assert (unconfigured.status, unconfigured.reason) == ("not configured", NOT_CONFIGURED)
        d.use_aft_host(KEY.hex(), 7001)
        assert (await d.register_aft()).registered
    finally:
        await d.close()


async def test_a_machine_registered_to_another_host_is_never_taken_over(bank: Bank) -> None:
    b = bank.machines[0]
    egm = b.face.answers.aft
    egm.register(AftRegister(1, 0x00, 5001, bytes(20), 0))
    egm.register(AftRegister(1, 0x01, 5001, bytes(range(20, 40)), 424242))
    d = driver(b)
    await d.open()
    try:
        found = await d.register_aft()
        assert not found.registered
        assert found.status == "refused"
        assert "another AFT host (POS ID 424242)" in (found.reason or "")
        assert egm.pos_id == 424242  # left as it was
        with pytest.raises(MachineRefused, match="another AFT host"):
            await d.enter_tournament(credits=100, seconds=60)
        assert b.machine.restricted_credits == 0
    finally:
        await d.close()


async def test_our_pos_id_with_an_old_key_is_registered_again(bank: Bank) -> None:
    b = bank.machines[0]
    egm = b.face.answers.aft
    egm.register(AftRegister(1, 0x00, 5001, bytes(20), 0))
    egm.register(AftRegister(1, 0x01, 5001, bytes(range(20, 40)), 7001))
    d = driver(b)
    await d.open()
    try:
        assert (await d.register_aft()).registered
        assert egm.key == KEY
    finally:
        await d.close()


async def test_asset_number_zero_is_refused(bank: Bank) -> None:
    b = bank.machines[0]
    b.face.answers.aft.settings.asset_number = 0
    d = driver(b)
    await d.open()
    try:
        found = await d.register_aft()
        assert (found.registered, found.status) == (False, "refused")
        assert "asset number is 0" in (found.reason or "")
    finally:
        await d.close()


async def test_a_heat_loads_pending_transfers_to_the_end_and_sweeps_back(bank: Bank) -> None:
    b = bank.machines[1]
    m = b.machine
    b.face.answers.aft.settings.pending_reads = 3  # each transfer: 40 three times, then done
    d = driver(b)
    await d.open()
    try:
        await d.enter_tournament(credits=200, seconds=60)
        assert (m.restricted_credits, m.cashable_credits) == (200, 0)
        last = b.face.answers.aft.last
        assert last is not None
        assert (last.asset_number, last.expiration, last.transfer_status) == (5002, 1, 0x00)
        assert len(last.transaction_id) == 20
        await d.unlock()
        for _ in range(5):
            m.spin(bet=2)
        await d.lock()
        await d.exit_tournament()
        assert (m.restricted_credits, m.cashable_credits) == (0, 0)
        sweep = b.face.answers.aft.last
        assert sweep is not None
        assert sweep.transfer_type == AftTransferType.IN_HOUSE_TO_HOST
        assert sweep.transaction_id != last.transaction_id  # unique per transfer
    finally:
        await d.close()


async def test_a_transfer_still_pending_past_the_bound_is_a_refusal(bank: Bank) -> None:
    b = bank.machines[1]
    b.face.answers.aft.settings.pending_reads = 1000
    d = driver(b)
    await d.open()
    try:
        with pytest.raises(MachineRefused, match="still pending after 25 interrogations"):
            await d.enter_tournament(credits=200, seconds=60)
    finally:
        await d.close()


async def test_a_swapped_machine_answers_93_and_the_refusal_names_it(bank: Bank) -> None:
    b = bank.machines[1]
    d = driver(b)
    await d.open()
    try:
        assert (await d.register_aft()).registered
        b.face.answers.aft.settings.asset_number = 6000  # another EGM behind the endpoint
        refusal = "93 asset number mismatch: sent asset number 5002"
        with pytest.raises(MachineRefused, match=refusal):
            await d.enter_tournament(credits=200, seconds=60)
        assert b.machine.restricted_credits == 0
    finally:
        await d.close()


async def test_a_registration_refused_at_entry_is_a_refusal_with_the_reason(bank: Bank) -> None:
    b = bank.machines[1]
    b.face.answers.aft.settings.registration = RegistrationMode.REFUSE
    d = driver(b)
    await d.open()
    try:
        with pytest.raises(MachineRefused, match=r"refused AFT registration \(80 not registered\)"):
            await d.enter_tournament(credits=200, seconds=60)
    finally:
        await d.close()


async def test_a_lost_transfer_reply_is_settled_by_interrogation(bank: Bank) -> None:
    """The EGM moves the credits but every copy of its reply is lost: the driver
    interrogates, finds its own transaction done, and loads nothing twice."""
    b = bank.machines[1]
    answers = b.face.answers
    real = answers.answer
    lost: set[str] = set()

    def lose_the_first_transfer_reply(poll: HostMessage) -> EgmMessage | None:
        if isinstance(poll, AftTransfer) and (not lost or poll.transaction_id in lost):
            if not lost:
                real(poll)  # done on the machine ...
                lost.add(poll.transaction_id)
            return None  # ... but the host never hears it, nor any repeat
        return real(poll)

    answers.answer = lose_the_first_transfer_reply  # type: ignore[method-assign]
    d = driver(b)
    await d.open()
    try:
        await d.enter_tournament(credits=200, seconds=60)
        assert b.machine.restricted_credits == 200  # loaded once
        last = b.face.answers.aft.last
        assert last is not None
        assert last.transaction_id in lost
    finally:
        answers.answer = real  # type: ignore[method-assign]
        await d.close()

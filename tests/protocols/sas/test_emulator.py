"""The emulated EGM's SAS face and the bank: answers, silence, exceptions, AFT, faults,
ports, players."""

from __future__ import annotations

import datetime as dt
import socket

import pytest

from emulators.bank import Bank
from emulators.machine import EmulatedMachine, Event, ModelEvent
from emulators.player import Players
from emulators.sas_aft import AftSettings
from emulators.sas_face import EXCEPTION_CODES, PollAnswers, corrupt_last_byte
from protocols.sas import (
    Ack,
    AftInterrogate,
    AftTransfer,
    AftTransferReply,
    AftTransferStatus,
    AftTransferType,
    Busy,
    CrcError,
    CurrentCreditsReply,
    Nack,
    RemoteHandpayReset,
    ReplyParser,
    SendCurrentCredits,
    SendSelectedMeters,
    SendTournamentMeters,
    Shutdown,
    StreamDecoder,
    TournamentMode,
    encode_egm_message,
)
from protocols.sas.client import SasTimeout

from .test_client_sas import paired


def answers(*, aft: AftSettings | None = None, **kwargs: object) -> PollAnswers:
    machine = EmulatedMachine("A1", seed=1, **kwargs)  # type: ignore[arg-type]
    return PollAnswers(machine, 1, aft=aft)


LAX = AftSettings(lax=True)  # asset number and registration not checked: amounts alone


def test_unsupported_polls_get_silence() -> None:
    a = answers(tournament_supported=False)
    assert a.answer(SendSelectedMeters(1, 0, (0x0C,))) is None
    assert a.answer(TournamentMode.enter(1, 0, 60, 100)) is None
    assert a.answer(SendTournamentMeters(1, 0)) is None


def test_tournament_refusals_are_nack_or_busy() -> None:
    a = answers()
    a.machine.insert_bill(5)
    # sas.md §5: cashable credits on the meter is a refusal, not a wait
    assert a.answer(TournamentMode.enter(1, 0, 60, 100)) == Nack(1)
    a.machine.cash_out()
    a.machine.raise_handpay()  # a handpay must be paid first: busy until then
    assert a.answer(TournamentMode.enter(1, 0, 60, 100)) == Busy(1)
    a.machine.reset_handpay()
    assert a.answer(TournamentMode.enter(1, 0, 60, 100)) == Ack(1)
    assert a.machine.tournament is not None
    assert a.machine.tournament.seconds == 60


def test_a_dark_machine_refuses_host_commands() -> None:
    a = answers()
    a.machine.power_off()
    assert a.answer(Shutdown(1)) == Nack(1)


def _transfer(kind: int, tid: str, restricted: int, cashable: int = 0) -> AftTransfer:
    return AftTransfer(
        1, transfer_type=kind, cashable_cents=cashable, restricted_cents=restricted,
        nonrestricted_cents=0, transaction_id=tid, asset_number=0,
    )  # fmt: skip


def test_aft_loads_only_play_only_credits_and_never_twice() -> None:
    a = answers(tournament_supported=False, aft=LAX)
    first = a.answer(_transfer(AftTransferType.IN_HOUSE_TO_MACHINE, "T-1", 300))
    assert isinstance(first, AftTransferReply)
    assert first.transfer_status == AftTransferStatus.FULL_TRANSFER_OK
    again = a.answer(_transfer(AftTransferType.IN_HOUSE_TO_MACHINE, "T-1", 300))
    assert again == first
    assert a.machine.restricted_credits == 300  # same ID: no new money
    cash = a.answer(_transfer(AftTransferType.IN_HOUSE_TO_MACHINE, "T-2", 0, cashable=100))
    assert isinstance(cash, AftTransferReply)
    assert cash.transfer_status == AftTransferStatus.INVALID_AMOUNT_OR_EXPIRATION  # T12
    out = a.answer(_transfer(AftTransferType.IN_HOUSE_TO_HOST, "T-3", 300))
    assert isinstance(out, AftTransferReply)
    assert out.transfer_status == 0
    assert a.machine.credits == 0
    too_much = a.answer(_transfer(AftTransferType.IN_HOUSE_TO_HOST, "T-4", 1))
    assert isinstance(too_much, AftTransferReply)
    assert too_much.transfer_status == AftTransferStatus.UNABLE_TO_TRANSFER_NOW


async def test_remote_handpay_reset_reports_52_only_when_a_handpay_was_reset() -> None:
    async with paired("memory") as p:
        seen: list[Event] = []

        def note(e: ModelEvent) -> None:
            seen.append(e.event)

        p.machine.subscribe(note)
        assert await p.client.request(RemoteHandpayReset(1)) == Ack(1)
        assert await p.client.events() == []
        assert Event.HANDPAY_RESET not in seen
        p.machine.raise_handpay()
        assert await p.client.request(RemoteHandpayReset(1)) == Ack(1)
        assert await p.client.events() == [0x51, 0x52]  # pending, then reset
        assert not p.machine.handpay_pending
        assert await p.client.request(RemoteHandpayReset(1)) == Ack(1)  # again: nothing
        assert await p.client.events() == []


async def test_aft_interrogation_before_any_transfer_is_status_ff() -> None:
    async with paired("memory", tournament_supported=False) as p:
        reply = await p.client.request(AftInterrogate(1))
        assert reply == AftTransferReply.no_information(1)
        assert reply.status is AftTransferStatus.NO_INFORMATION


def _load(tid: str, cents: int) -> AftTransfer:
    return AftTransfer(
        1, transfer_type=AftTransferType.IN_HOUSE_TO_MACHINE, cashable_cents=0,
        restricted_cents=cents, nonrestricted_cents=0, transaction_id=tid, asset_number=0,
        expiration=2, pool_id=9,
    )  # fmt: skip


async def test_aft_replies_carry_date_expiration_pool_and_cumulative_meters() -> None:
    async with paired("memory", tournament_supported=False, aft=LAX) as p:
        first = await p.client.aft_transfer(_load("H-1", 300))
        assert (first.expiration, first.pool_id) == (2, 9)
        assert first.cumulative_restricted_cents == 300
        assert first.transaction_at is not None
        await p.client.aft_transfer(_load("H-2", 200))
        last = await p.client.request(AftInterrogate(1))
        assert isinstance(last, AftTransferReply)
        assert last.transaction_id == "H-2"
        assert (last.restricted_cents, last.cumulative_restricted_cents) == (200, 500)
        assert last.cumulative_cashable_cents == last.cumulative_nonrestricted_cents == 0
        sweep = AftTransfer(
            1, transfer_type=AftTransferType.IN_HOUSE_TO_HOST, cashable_cents=0,
            restricted_cents=500, nonrestricted_cents=0, transaction_id="H-3", asset_number=0,
            pool_id=9,
        )  # fmt: skip
        out = await p.client.aft_transfer(sweep)  # meters are kept per transfer type
        assert out.cumulative_restricted_cents == 500
        assert p.machine.credits == 0


def test_an_aft_reply_is_dated_by_the_machines_clock_in_venue_time() -> None:
    utc = dt.datetime(2026, 11, 29, 16, 0, 5, 250_000, tzinfo=dt.UTC)
    machine = EmulatedMachine("A1", tournament_supported=False, wall_clock=lambda: utc)
    reply = PollAnswers(machine, 1, aft=LAX).answer(_load("H-1", 300))
    assert isinstance(reply, AftTransferReply)
    assert reply.transaction_at == dt.datetime(2026, 11, 29, 18, 0, 5)  # SAST, whole seconds


def test_every_exception_code_is_a_valid_sas_code() -> None:
    assert {int(c) for c in EXCEPTION_CODES.values()} >= {0x11, 0x12, 0x17, 0x18, 0x7E, 0x7F}


@pytest.mark.parametrize("reply_credits", [0, 1234, 0xFF, 99_999_999])
def test_corrupting_a_reply_keeps_the_escaping_valid_but_fails_the_crc(
    reply_credits: int,
) -> None:

    wire = encode_egm_message(CurrentCreditsReply(1, reply_credits))
    bad = corrupt_last_byte(wire)
    assert not any(isinstance(e, Exception) for e in StreamDecoder().feed_chunks(bad))
    parser = ReplyParser()
    parser.expect(SendCurrentCredits(1))
    events = parser.feed(bad)
    assert len(events) == 1
    assert isinstance(events[0], CrcError)


async def test_faults_are_per_machine_and_switch_at_run_time() -> None:
    async with paired("memory") as one, paired("memory") as two:
        one.face.inject(no_reply=True)
        with pytest.raises(SasTimeout):
            await one.client.credits()
        assert await two.client.credits() == 0
        one.face.clear_faults()
        assert await one.client.credits() == 0


async def test_game_events_reach_the_host_as_7e_7f() -> None:
    async with paired("tcp") as p:
        await p.client.unlock()
        p.machine.insert_bill(10)
        p.machine.spin()
        assert await p.client.events() == [0x7E, 0x7F]


async def test_bank_serves_each_machine_on_its_own_reported_port() -> None:
    async with Bank(5, seed=9, no_tournament_support=2) as bank:
        ports = [b.port for b in bank.machines]
        assert len(set(ports)) == 5
        assert all(p > 0 for p in ports)
        assert [b.machine.tournament_supported for b in bank.machines] == [
            True,
            True,
            True,
            False,
            False,
        ]
        assert bank.machines[0].endpoint == f"sas+tcp://127.0.0.1:{ports[0]}?address=1"
        for b in bank.machines:
            with socket.create_connection(("127.0.0.1", b.port), timeout=2):
                pass


async def test_bank_with_a_base_port_uses_consecutive_ports() -> None:
    with socket.socket() as s:  # find a free run of ports (bounded attempts)
        s.bind(("127.0.0.1", 0))
        base = s.getsockname()[1]
    base = min(base, 65000)
    for _ in range(20):
        try:
            async with Bank(3, base_port=base) as bank:
                assert [b.port for b in bank.machines] == [base, base + 1, base + 2]
                return
        except OSError:
            base = 20000 + (base * 7) % 30000
    pytest.skip("no free run of 3 ports found")


def test_bank_rejects_bad_sizes() -> None:
    with pytest.raises(ValueError, match="at least one machine"):
        Bank(0)
    with pytest.raises(ValueError, match=r"no-tournament-support must be 0\.\.3"):
        Bank(3, no_tournament_support=4)
    with pytest.raises(ValueError, match=r"leaves 1024\.\.65535"):
        Bank(10, base_port=65530)


def test_players_spin_only_where_play_is_enabled() -> None:
    now = [0.0]
    machines = [EmulatedMachine(f"P{i}", seed=i, clock=lambda: now[0]) for i in range(3)]
    for m in machines:
        m.insert_bill(100)
    machines[1].lock_play()
    machines[2].open_slot_door()
    players = Players(machines, seed=4, pace=1.0)
    played = 0
    for step in range(40):  # 20 simulated seconds
        now[0] = step * 0.5
        played += players.step(now[0])
    assert machines[0].meters.games_played == played > 10
    assert machines[1].meters.games_played == machines[2].meters.games_played == 0


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (["--machines", "0"], "--machines must be 1..5000"),
        (["--machines", "3", "--no-tournament-support", "4"], "--no-tournament-support"),
        (["--machines", "10", "--base-port", "65530"], "--base-port 65530"),
        (["--address", "200"], "--address must be 1..127"),
    ],
)
def test_emulate_command_rejects_bad_options_in_one_line(
    argv: list[str], complaint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.app.cli import main

    assert main(["emulate", "sas", *argv]) == 2
    err = capsys.readouterr().err
    assert complaint in err
    assert err.count("\n") == 1

"""The emulated EGM's model: tournament rules (sas.md §5), timer, power, RTP."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from emulators.machine import (
    _REEL,
    EmulatedMachine,
    Event,
    MachineRefusal,
    ModelEvent,
    _line_pay,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def machine(clock: FakeClock) -> EmulatedMachine:
    return EmulatedMachine("m1", seed=7, clock=clock)


def events_of(machine: EmulatedMachine) -> list[Event]:
    seen: list[Event] = []

    def listener(note: ModelEvent) -> None:
        seen.append(note.event)

    machine.subscribe(listener)
    return seen


def test_entry_refused_while_cashable_credits_remain(machine: EmulatedMachine) -> None:
    # sas.md §5: no entering tournament mode while cashable credits are on the machine
    machine.insert_bill(20)
    with pytest.raises(MachineRefusal, match="cashable"):
        machine.enter_tournament(1000, 300)
    assert not machine.in_tournament
    assert machine.cash_out() == 20
    machine.enter_tournament(1000, 300)
    assert machine.in_tournament
    assert machine.credits == 1000
    assert machine.play_locked


@pytest.mark.parametrize("fault", ["tilt", "raise_handpay", "open_slot_door"])
def test_entry_refused_while_a_fault_is_pending(machine: EmulatedMachine, fault: str) -> None:
    getattr(machine, fault)()
    with pytest.raises(MachineRefusal):
        machine.enter_tournament(1000, 300)


def test_tournament_credits_cannot_be_cashed_and_bills_are_refused(
    machine: EmulatedMachine,
) -> None:
    # sas.md §5 and T12: tournament credits have no cash value
    machine.enter_tournament(500, 300)
    with pytest.raises(MachineRefusal, match="cash-out"):
        machine.cash_out()
    with pytest.raises(MachineRefusal, match="bill"):
        machine.insert_bill(10)
    with pytest.raises(MachineRefusal, match="funds transfer"):
        machine.transfer_in_restricted(10)
    machine.exit_tournament()
    assert machine.credits == 0  # tournament credits vanish on exit


def test_tournament_play_keeps_live_meters_untouched(machine: EmulatedMachine) -> None:
    machine.enter_tournament(1000, 300)
    machine.unlock_play()
    before = (machine.meters.coin_in, machine.meters.games_played, machine.meters.coin_out)
    wins = 0
    for _ in range(200):
        result = machine.spin(bet=2)
        wins += result.win
    t = machine.tournament_meters()
    assert (machine.meters.coin_in, machine.meters.games_played, machine.meters.coin_out) == before
    assert t.games_played == 200
    assert t.credits_wagered == 400
    assert t.credits_won == wins
    assert machine.credits == 1000 - 400 + wins
    machine.exit_tournament()
    assert machine.tournament_meters() == t  # LP 95–99 still readable after exit


def test_timer_starts_on_unlock_and_expiry_locks_play(
    machine: EmulatedMachine, clock: FakeClock
) -> None:
    seen = events_of(machine)
    machine.enter_tournament(100, 60)
    clock.now += 30  # time waiting for the start does not count
    assert machine.tournament_seconds_left() == 60
    machine.unlock_play()
    clock.now += 59.5
    assert machine.play_enabled()
    clock.now += 0.5
    assert not machine.play_enabled()
    assert Event.TOURNAMENT_TIME_UP in seen
    with pytest.raises(MachineRefusal, match="play disabled"):
        machine.spin()


def test_power_cut_pauses_timer_and_keeps_tournament(
    machine: EmulatedMachine, clock: FakeClock
) -> None:
    machine.enter_tournament(100, 60)
    machine.unlock_play()
    machine.spin()
    credits = machine.credits
    clock.now += 20
    machine.power_off()
    with pytest.raises(MachineRefusal, match="power"):
        machine.lock_play()
    clock.now += 600  # dark: the timer does not run
    machine.power_on()
    assert machine.in_tournament
    assert machine.credits == credits
    assert machine.play_locked  # comes back locked until the host enables it
    assert machine.meters.power_resets == 1
    machine.unlock_play()
    assert machine.tournament_seconds_left() == pytest.approx(40)


def test_repeated_entry_for_the_same_heat_is_harmless(machine: EmulatedMachine) -> None:
    machine.enter_tournament(100, 60)
    machine.enter_tournament(100, 60)
    with pytest.raises(MachineRefusal, match="already"):
        machine.enter_tournament(200, 60)


def test_unsupported_machine_refuses_tournament_but_takes_restricted_credits(
    clock: FakeClock,
) -> None:
    machine = EmulatedMachine("m2", tournament_supported=False, clock=clock)
    with pytest.raises(MachineRefusal, match="not supported"):
        machine.enter_tournament(100, 60)
    machine.transfer_in_restricted(100)
    machine.unlock_play()
    machine.spin(bet=5)
    assert machine.restricted_credits + machine.cashable_credits == machine.credits
    left = machine.credits
    machine.lock_play()
    assert machine.transfer_out_restricted() + machine.cashable_credits == left


def test_clock_can_be_set_and_must_be_aware(machine: EmulatedMachine) -> None:
    target = datetime(2026, 11, 29, 19, 0, tzinfo=UTC)
    machine.set_clock(target)
    assert abs(machine.now() - target) < timedelta(seconds=1)
    with pytest.raises(ValueError):  # noqa: PT011
        machine.set_clock(datetime(2026, 1, 1))


def test_paytable_return_is_about_92_6_percent() -> None:
    outcomes = list(itertools.product(range(len(_REEL)), repeat=3))
    rtp = sum(_line_pay(s) for s in outcomes) / len(outcomes)
    assert rtp == pytest.approx(0.9259, abs=1e-4)


def test_seeded_spins_are_reproducible_and_converge_to_the_paytable(clock: FakeClock) -> None:
    def play(seed: int, spins: int) -> tuple[int, list[tuple[int, ...]]]:
        m = EmulatedMachine("r", seed=seed, clock=clock)
        m.insert_bill(spins)
        won, stops = 0, []
        for _ in range(spins):
            r = m.spin()
            won += r.win
            stops.append(r.stops)
        return won, stops

    assert play(3, 50) == play(3, 50)
    won, _ = play(11, 40_000)
    # 40 000 spins: the standard error of the return is about 2.3 points; allow 4
    assert 0.83 < won / 40_000 < 1.02

"""A game that takes time (``game_seconds`` > 0): the bet is wagered at the press, the
result lands when the machine's clock says the game is over, and a host lock (SAS LP 01)
lets the game complete first (sas.md §3)."""

from __future__ import annotations

import pytest

from emulators.machine import EmulatedMachine, Event, MachineRefusal, ModelEvent
from emulators.player import Players


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _recorder(machine: EmulatedMachine) -> list[Event]:
    seen: list[Event] = []

    def listener(note: ModelEvent) -> None:
        seen.append(note.event)

    machine.subscribe(listener)
    return seen


def _winning_seed() -> int:
    """A seed whose first spin pays (so a missed result would show in the meters)."""
    for seed in range(500):
        m = EmulatedMachine("probe", seed=seed)
        m.enter_tournament(100, 60)
        m.unlock_play()
        if m.spin(1).win > 0:
            return seed
    raise AssertionError("no winning first spin in 500 seeds")  # pragma: no cover


def test_lock_during_a_game_lets_it_complete_first() -> None:
    clock = FakeClock()
    m = EmulatedMachine("m1", seed=_winning_seed(), clock=clock, game_seconds=1.5)
    m.enter_tournament(100, 60)
    m.unlock_play()
    seen = _recorder(m)
    result = m.spin(1)
    assert result.win > 0
    # wagered at the press; the win not yet paid, the game not yet counted
    assert m.game_in_progress
    assert m.credits == 99
    meters = m.tournament_meters()
    assert (meters.credits_wagered, meters.credits_won, meters.games_played) == (1, 0, 0)
    with pytest.raises(MachineRefusal, match="game in progress"):
        m.spin(1)  # one game at a time
    m.lock_play()  # the heat's end (LP 01): ACKed at once, the game is not aborted
    clock.now += 1.0
    m.tick()
    assert m.game_in_progress
    assert seen == [Event.GAME_STARTED, Event.PLAY_LOCKED]
    with pytest.raises(MachineRefusal, match="game in progress"):
        m.exit_tournament()
    clock.now += 0.5
    m.tick()
    assert not m.game_in_progress
    assert seen[-1] is Event.GAME_ENDED
    assert m.credits == 99 + result.win == result.credits_after
    meters = m.tournament_meters()
    assert (meters.credits_wagered, meters.credits_won, meters.games_played) == (1, result.win, 1)
    # T12: the score from the tournament meters equals the credit meter
    assert 100 - meters.credits_wagered + meters.credits_won == m.credits
    m.exit_tournament()
    assert not m.in_tournament


def test_entry_refused_while_a_game_runs_and_accounting_meters_move_at_the_end() -> None:
    clock = FakeClock()
    m = EmulatedMachine("m1", seed=3, clock=clock, game_seconds=2.0)
    m.insert_bill(10)
    m.spin(2)
    assert m.meters.coin_in == 2
    assert m.meters.games_played == 0
    assert m.credits == 8
    m.cash_out()
    with pytest.raises(MachineRefusal, match="game in progress"):
        m.enter_tournament(100, 60)
    clock.now += 2.0
    m.tick()
    assert m.meters.games_played == 1
    assert not m.game_in_progress


def test_power_cut_keeps_the_game_which_completes_once_power_is_back() -> None:
    clock = FakeClock()
    m = EmulatedMachine("m1", seed=5, clock=clock, game_seconds=1.0)
    m.enter_tournament(50, 60)
    m.unlock_play()
    result = m.spin(1)
    m.power_off()
    clock.now += 5.0
    m.tick()
    assert m.game_in_progress  # dark: nothing happens
    m.power_on()
    m.tick()
    assert not m.game_in_progress
    assert m.credits == 49 + result.win


def test_players_wait_for_a_game_in_progress() -> None:
    clock = FakeClock()
    m = EmulatedMachine("m1", seed=1, clock=clock, game_seconds=1.0)
    m.enter_tournament(100, 60)
    m.unlock_play()
    players = Players([m], seed=0, pace=0.1)
    seat = players.seats[0]
    assert players.step(10.0) == 1
    assert m.game_in_progress
    assert players.step(20.0) == 0
    assert seat.refused == 0  # skipped, not refused
    clock.now += 1.0
    assert players.step(30.0) == 1  # the game ended on this round's tick; a new one
    assert seat.spins == 2
    assert m.tournament_meters().games_played == 1


def test_negative_game_time_is_refused() -> None:
    with pytest.raises(ValueError, match="game_seconds"):
        EmulatedMachine("m1", game_seconds=-1.0)

"""T12: the score is the tournament credit meter = start - wagered + won, one
function for the heat runner (NATIVE, from LP 99) and the SAS driver (HOST_TIMED).

Clauses: docs/rules.md#t12.
"""

from __future__ import annotations

import pytest

from emulators.machine import EmulatedMachine
from gateway.machines.scoring import credits_won, tournament_credits

# (start, wagered, won, end): worked by hand
GOLDEN = [
    (1000, 0, 0, 1000),  # nobody played
    (1000, 250, 75, 825),
    (500, 500, 0, 0),  # bet everything, won nothing
    (500, 900, 1400, 1000),  # wins re-bet
    (99_999_999, 1, 0, 99_999_998),  # the largest heat LP 8C carries
]


@pytest.mark.parametrize(("start", "wagered", "won", "end"), GOLDEN)
def test_t12_golden(start: int, wagered: int, won: int, end: int) -> None:
    assert tournament_credits(start, wagered, won) == end
    assert credits_won(start, wagered, end) == won  # the SAS driver's direction


def test_t12_matches_an_emulated_machine_after_play() -> None:
    machine = EmulatedMachine("G1", seed=7)
    machine.enter_tournament(credits=300, seconds=60)
    machine.unlock_play()
    for _ in range(40):
        if machine.credits:
            machine.spin(1)
    t = machine.tournament_meters()
    assert t.games_played > 0
    assert tournament_credits(300, t.credits_wagered, t.credits_won) == machine.credits

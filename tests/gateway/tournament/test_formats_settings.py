"""The heat format as a tournament setting (house clause F1, docs/rules.md#f1): stored
with the tournament, changed with a reason, refused in one line naming the field, and
fixed while a stage is part played."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from gateway.heat_formats import FormatKind, heat_format
from gateway.tournament import services as svc
from gateway.tournament.rules.violations import RuleViolation
from gateway.tournament.services.common import find_tournament, load_settings
from gateway.tournament.settings import TournamentSettings
from storage.enums import Stage

from .conftest import Desk, at

DAY = date(2026, 11, 21)


async def _settings(desk: Desk, tid: int) -> TournamentSettings:
    async def read(session: AsyncSession) -> TournamentSettings:
        return await load_settings(session, await find_tournament(session, tid))

    result: TournamentSettings = await desk.run(read)
    return result


async def _change(desk: Desk, tid: int, **changes: object) -> TournamentSettings:
    result: TournamentSettings = await desk.run(
        svc.change_settings, tid, changes, reason="F1: the house runs it", actor="director"
    )
    return result


async def test_f1_f2_f3_the_format_is_stored_with_the_tournament_and_audited(desk: Desk) -> None:
    tid = await desk.tournament()
    assert (await _settings(desk, tid)).heat_format.timed  # the sheet's timed heat (T12)
    changed = await _change(desk, tid, format="games-limited", games_per_seat=30)
    assert changed.heat_format == heat_format("games-limited", games_per_seat=30)
    assert (await _settings(desk, tid)).heat_format == changed.heat_format
    assert changed.to_json()["games_per_seat"] == 30
    # A new format without games clears the games (F1): no refusal for a stale field.
    spent = await _change(desk, tid, format="credit-limited", minimum_bet=3)
    assert spent.heat_format.kind is FormatKind.CREDITS
    assert spent.heat_format.games is None
    assert (await _settings(desk, tid)).heat_format.minimum_bet == 3
    created = await desk.tournament(
        TournamentSettings.from_json({"format": "games-limited", "games_per_seat": 12}), "Two"
    )
    assert (await _settings(desk, created)).heat_format.games == 12


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"format": "sprint"}, "rule F1: format must be one of timed, games-limited"),
        ({"format": "games-limited"}, "rule F2: a games-limited heat needs games_per_seat"),
        ({"format": "games-limited", "games_per_seat": 0}, "rule F2: games_per_seat must be"),
        ({"games_per_seat": 5}, "rule F1: games_per_seat is only for a games-limited heat"),
        ({"minimum_bet": 0}, "rule F3: minimum_bet must be 1 to 1000, got 0"),
        ({"games_per_seat": "ten"}, "settings: games_per_seat must be an integer"),
    ],
)
async def test_f1_a_bad_format_is_refused_in_one_line_and_changes_nothing(
    desk: Desk, changes: dict[str, object], line: str
) -> None:
    tid = await desk.tournament()
    with pytest.raises(RuleViolation, match=line) as refused:
        await _change(desk, tid, **changes)
    assert "\n" not in str(refused.value)
    assert (await _settings(desk, tid)).heat_format.timed


async def test_f1_the_format_is_fixed_while_a_stage_is_part_played(desk: Desk) -> None:
    tid = await desk.tournament()
    first = await desk.heat(at(DAY, 18))
    await desk.heat(at(DAY, 19))
    player = await desk.player("8001015009087", "Ann")
    (entry,) = await desk.sell(player, at(DAY, 9))
    await desk.register(first, player, at(DAY, 10), entry)
    await _change(desk, tid, format="games-limited", games_per_seat=20)  # nothing played
    await desk.play(first, {1: 900}, at(DAY, 18))
    with pytest.raises(RuleViolation, match="rule F1: the qualifying stage is part played"):
        await _change(desk, tid, format="timed")
    assert (await _settings(desk, tid)).heat_format.games == 20
    # Another stage's heat does not matter, and a change that keeps the format is fine.
    await desk.heat(at(DAY, 21), stage=Stage.FINAL)
    await _change(desk, tid, prize_places=4)

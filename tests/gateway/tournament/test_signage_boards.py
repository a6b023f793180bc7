"""What the signs show of a tournament (gateway.tournament.services.signage), on each
backend: the stage's leaderboard with its cuts (rules 13, 14) and each place's prize
(rule 15), provisional until every heat of the stage is over, and each bank's next heat."""

from __future__ import annotations

from datetime import date

from gateway.tournament.rules.enums import Stage
from gateway.tournament.services.prizes import set_schedule
from gateway.tournament.services.signage import leaderboard, next_heats

from .conftest import Desk, at

DAY = date(2026, 11, 2)
Q = Stage.QUALIFYING
PLAYERS = (("8001015009087", "Ann Mokoena"), ("8101015009086", "Ben Dlamini-Zulu"),
           ("8201015009085", "Cat van der Merwe"))  # fmt: skip


async def test_rule_15_leaderboard_shows_cuts_and_the_prize_per_place(desk: Desk) -> None:
    """Rule 15: the advertised minimum per place is on the leaderboard beside who holds
    it; rules 13-14: the direct-final and semi-final cuts are drawn after their places."""
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    later = await desk.heat(at(DAY, 20))
    for id_number, name in PLAYERS:
        player = await desk.player(id_number, name)
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 12, 5))
    await desk.run(set_schedule, tid, Q, {1: 500_000, 2: 250_000}, actor="director", now=at(DAY, 9))
    await desk.play(heat, {1: 1500, 2: 1200, 3: 900}, at(DAY, 18))

    board = await desk.run(leaderboard, tid, Q, now=at(DAY, 19))
    assert [(r["place"], r["player"], r["credits"]) for r in board["rows"]] == [
        (1, "Ann Mokoena", 1500),
        (2, "Ben Dlamini-Zulu", 1200),
        (3, "Cat van der Merwe", 900),
    ]
    assert board["prizes"] == [{"place": 1, "cents": 500_000}, {"place": 2, "cents": 250_000}]
    assert [c["after"] for c in board["cuts"]] == [1, 50]  # 1 direct, then 49 semi places
    assert "rule 13" in board["cuts"][0]["label"]
    assert "rule 14" in board["cuts"][1]["label"]
    assert board["stage_title"] == "Qualifying"
    assert board["official"] is False  # a qualifying heat is still to come: provisional

    upcoming = await desk.run(next_heats, ["A", "B"])
    assert set(upcoming) == {"A"}  # bank B has nothing scheduled
    assert upcoming["A"]["heat"] == str(later)
    assert upcoming["A"]["starts_at"] == at(DAY, 20)
    assert upcoming["A"]["stage"] == "Qualifying"


async def test_a_stage_with_every_heat_over_is_official(desk: Desk) -> None:
    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    for id_number, name in PLAYERS[:2]:
        player = await desk.player(id_number, name)
        await desk.sell(player, at(DAY, 12))
        await desk.register(heat, player, at(DAY, 12, 5))
    await desk.play(heat, {1: 800, 2: 700}, at(DAY, 18))
    board = await desk.run(leaderboard, tid, Q, now=at(DAY, 19))
    assert board["official"] is True
    assert board["prizes"] == []  # nothing advertised for this stage: no prize column
    assert await desk.run(next_heats, None) == {}


async def test_a_closed_heat_republishes_its_leaderboard_and_the_banks_next_heat(
    desk: Desk,
) -> None:
    """What HeatFeeds puts on the feed when a tournament heat is over (docs/signage.md)."""
    import asyncio
    import json
    from typing import Any

    from gateway.heats.hooks import Progress, ProgressNote
    from gateway.heats.live_feed import HeatFeeds

    tid = await desk.tournament()
    heat = await desk.heat(at(DAY, 18))
    later = await desk.heat(at(DAY, 20))
    player = await desk.player(*PLAYERS[0])
    await desk.sell(player, at(DAY, 12))
    await desk.register(heat, player, at(DAY, 12, 5))
    await desk.play(heat, {1: 1500}, at(DAY, 18))

    last: dict[str, Any] = {}

    class Recorder:
        def publish_nowait(
            self, topic: str, payload: dict[str, Any], *, retain: bool = False
        ) -> None:
            last[topic] = json.loads(json.dumps(payload, default=str))

    feeds = HeatFeeds(Recorder(), desk.maker, lambda run: None, tick=None,
                      clock=lambda: at(DAY, 19))  # fmt: skip
    feeds(ProgressNote(Progress.STATE, run_id=5, state="closed", heat_id=heat))
    async with asyncio.timeout(10):
        while f"tournament/{tid}/leaderboard" not in last or "bank/A/next" not in last:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
    await feeds.close()
    assert last[f"heat/{heat}/state"]["bank"] == "A"
    assert last[f"tournament/{tid}/leaderboard"]["rows"][0]["player"] == "Ann Mokoena"
    assert last["bank/A/next"]["heat"] == str(later)

    await feeds.publish_schedule(["A", "B"])
    assert last["bank/B/next"] == {"bank": "B", "heat": None}  # nothing on B: no time shown

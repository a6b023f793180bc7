"""LiveHeatFeed's signage labels and result words: which bank's screens show a heat,
whose leaderboard stands beside it, and standings provisional until the heat is closed."""

from __future__ import annotations

import json
from typing import Any

from gateway.heats.hooks import Progress, ProgressNote
from gateway.heats.live_feed import LiveHeatFeed


class Recorder:
    def __init__(self) -> None:
        self.last: dict[str, dict[str, Any]] = {}

    def publish_nowait(self, topic: str, payload: dict[str, Any], *, retain: bool = False) -> None:
        self.last[topic] = json.loads(json.dumps(payload, default=str))


def note(kind: Progress, **kw: Any) -> ProgressNote:
    return ProgressNote(kind=kind, run_id=1, **kw)


async def test_bank_and_tournament_follow_the_description_onto_every_topic() -> None:
    rec = Recorder()
    live = LiveHeatFeed(rec, "9", tick=None)
    live(note(Progress.STATE, state="running", seconds_left=300.0))
    live.describe(name="Ridge - heat 2", stage="Qualifying", bank="A", tournament="3")
    assert rec.last["current"] == {
        "heat": "9", "name": "Ridge - heat 2", "stage": "Qualifying", "bank": "A",
        "tournament": "3",
    }  # fmt: skip
    assert rec.last["heat/9/state"]["bank"] == "A"
    assert rec.last["heat/9/state"]["tournament"] == "3"


async def test_standings_are_provisional_while_collecting_and_official_once_closed() -> None:
    rec = Recorder()
    live = LiveHeatFeed(rec, "10", tick=None)
    live(note(Progress.SCORE, machine_id="A01", value=700))
    live(note(Progress.STATE, state="collecting"))
    assert rec.last["heat/10/standings"]["official"] is False
    live(note(Progress.STATE, state="closed"))
    assert rec.last["heat/10/standings"]["official"] is True
    live(note(Progress.STATE, state="restarted"))  # T20: void is never official
    assert rec.last["heat/10/standings"]["official"] is False
    assert rec.last["heat/10/standings"]["void"] is True

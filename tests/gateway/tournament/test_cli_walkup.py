"""``reelgate walkup ...`` end to end on a SQLite file (W1-W9): the director's window, the
windows and sessions read back, an attendant's confirm, and the refusals in one line."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gateway.app.cli import main
from gateway.tournament.services import unit_of_work
from gateway.tournament.services.walkup import walkup_at_card_in
from storage.db import make_sessionmaker
from tests.keyed_engine import make_engine as keyed_engine

from ..training_db import PASSWORD, add_accounts, cheap_hashes, type_passwords
from .test_cli import _seed_floor

ANN = "8001015009087"
ZONE = ZoneInfo("Africa/Johannesburg")


def _card_in(url: str, when: datetime) -> str:
    """The card desk's half: Ann's card in machine A-1 (an offer, W5)."""

    async def go() -> str:
        engine = keyed_engine(url)
        try:
            async with unit_of_work(make_sessionmaker(engine)) as s:
                decision = await walkup_at_card_in(
                    s, machine="A-1", card="C-ANN", player_id=1, at=when
                )
                assert decision is not None
                return decision.verdict.kind
        finally:
            await engine.dispose()

    return asyncio.run(go())


def test_w1_w5_w8_walkup_commands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}"
    _seed_floor(url)
    cheap_hashes(monkeypatch)
    add_accounts(url, ("dana", "director"), ("sam", "supervisor"))
    type_passwords(monkeypatch, *[PASSWORD] * 30)
    db = ["--database", url]

    def ok(*argv: str) -> Any:
        capsys.readouterr()
        assert main([*argv, *db, "--json"]) == 0, capsys.readouterr().err
        return json.loads(capsys.readouterr().out)

    def fails(*argv: str) -> str:
        capsys.readouterr()
        assert main([*argv, *db]) == 2
        return capsys.readouterr().err.strip()

    ok("tournament", "create", "Ridge")
    ok("players", "add", "--id-number", ANN, "--name", "Ann", "--dob", "1980-01-01",
       "--card", "C-ANN")  # fmt: skip
    ok("entries", "sell", ANN, "-t", "Ridge", "--now", "2026-12-07 12:00")
    base = ("walkup", "set", "Ridge", "A", "--opens", "18:00", "--closes", "23:00",
            "--seconds", "300", "--credits", "500")  # fmt: skip
    assert fails(*base, "--reason", " ") == (
        "reelgate: error: reason: a walk-up window is a director's decision: say why"
    )
    assert "opens: '6pm' is not a time HH:MM" in fails(
        "walkup", "set", "Ridge", "A", "--opens", "6pm", "--closes", "23:00", "--seconds",
        "300", "--credits", "500", "--reason", "x",
    )  # fmt: skip
    assert "bank: 'Z' is not on the floor" in fails(
        "walkup", "set", "Ridge", "Z", "--opens", "18:00", "--closes", "23:00", "--seconds",
        "300", "--credits", "500", "--reason", "x",
    )  # fmt: skip
    window = ok(*base, "--reason", "evening walk-up", "--now", "2026-12-07 12:00")
    assert (window["opens"], window["closes"], window["seconds"]) == ("18:00", "23:00", 300)
    listed = ok("walkup", "windows", "--now", "2026-12-07 19:00")["windows"]
    assert [(w["bank"], w["open_now"]) for w in listed] == [("A", True)]
    assert ok("walkup", "windows", "--now", "2026-12-07 12:00")["windows"][0]["open_now"] is False

    assert _card_in(url, datetime(2026, 12, 7, 19, 0, tzinfo=ZONE)) == "offer"
    offered = ok("walkup", "sessions")["sessions"]
    assert [(s["status"], s["machine"], s["active"]) for s in offered] == [
        ("offered", "A-1", True)
    ]
    started = ok("walkup", "confirm", str(offered[0]["id"]), "--now", "2026-12-07 19:00:10")
    assert started["bank"] == "A"
    assert "is started" in fails("walkup", "confirm", str(offered[0]["id"]), "--now",
                                 "2026-12-07 19:00:20")  # fmt: skip
    after = ok("walkup", "sessions", "--tournament", "Ridge")["sessions"]
    assert [(s["status"], s["heat_id"], s["heat_status"]) for s in after] == [
        ("started", started["heat"], "scheduled")
    ]
    shown = ok("audit", "show")
    actions = [e["action"] for e in (shown["entries"] if isinstance(shown, dict) else shown)]
    assert [a for a in actions if a.startswith("walkup.")][-3:] == [
        "walkup.window", "walkup.offer", "walkup.start"
    ]  # W9: every decision in the chain

"""The heat formats at the host's command line (house clauses F1–F3, F6): ``reelgate
tournament set format=… games_per_seat=…`` as every setting (a reason and a second
director), ``reelgate heat schedule --sit-and-go N``; a refusal is one line naming the
clause and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.app.cli import main

from .test_cli import db  # noqa: F401  (the fixture: a SQLite file with bank A)


def test_f1_f2_f3_f6_formats_at_the_command_line(
    capsys: pytest.CaptureFixture[str],
    db: list[str],  # noqa: F811
) -> None:
    assert main(["tournament", "create", "Ridge", *db]) == 0
    shown = capsys.readouterr().out
    assert "games-limited" in shown  # the setting's row names the formats (F1)
    second = ["--reason", "F1: the house runs it", "--as", "dirk", "--second", "dana"]
    set_ = ["tournament", "set", "Ridge", *db]
    assert main([*set_, "format=games-limited", *second]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "reelgate: error: rule F2: a games-limited heat needs games_per_seat"
    assert main([*set_, "format=games-limited", "games_per_seat=30", *second, "--json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert (settings["format"], settings["games_per_seat"]) == ("games-limited", 30)
    assert main([*set_, "format=credit-limited", "minimum_bet=2", *second, "--json"]) == 0
    settings = json.loads(capsys.readouterr().out)["settings"]
    assert (settings["format"], settings["games_per_seat"], settings["minimum_bet"]) == (
        "credit-limited", None, 2,
    )  # fmt: skip
    schedule = ["heat", "schedule", *db, "-t", "Ridge", "--bank", "A", "--now", "2026-11-20 10:00"]
    assert main([*schedule, "--start", "2026-11-21 18:00", "--sit-and-go", "4"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("reelgate: error: rule F6: sit_and_go_seats must be 1 to 3")
    assert "\n" not in err
    assert main([*schedule, "--start", "2026-11-21 18:00", "--sit-and-go", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["number"] == 1


def test_f2_f3_a_technician_s_test_heat_takes_a_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``reelgate heat run --games N`` / ``--credit-limited [MIN_BET]``: a bad limit is
    refused in one line before any machine is touched."""
    base = ["heat", "run", "--floor", str(tmp_path / "floor.toml"), "--bank", "A"]
    base += ["--seconds", "60", "--credits", "100"]
    assert main([*base, "--games", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "reelgate: error: rule F2: games_per_seat must be 1 to 10000, got 0"
    )
    assert main([*base, "--credit-limited", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "reelgate: error: rule F3: minimum_bet must be 1 to 1000, got 0"
    )

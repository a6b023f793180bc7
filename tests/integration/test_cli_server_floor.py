"""``--server URL`` for the technician, the desks and the Super 9 desk: ``bank
add-machine|move-machine``, ``players import-exclusions|disqualify`` and ``super9 set``
go through the API (``reelgate api`` in its own process) under the token's account;
``bank check|enable|disable`` need the gateway driving the bank, so against ``reelgate
api`` alone they are refused in one line naming why (on ``reelgate serve --http``:
tests/integration/console/test_api_technician.py)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.accounts import service
from storage.db import make_sessionmaker
from storage.floor import FloorBank, FloorMachine

from ..gateway.training_db import PASSWORD, cheap_hashes
from ..keyed_engine import make_engine
from .test_cli_server import Cli, _actors, api

__all__ = ["api"]  # the fixture: ``reelgate api`` on the test's database

ANN = "8001015009087"


async def _seed(url: str) -> dict[str, str]:
    engine = make_engine(url)
    now = datetime.now(UTC)
    tokens: dict[str, str] = {}
    try:
        async with make_sessionmaker(engine)() as session, session.begin():
            session.add(FloorBank(name="A", enabled=False))
            await session.flush()
            session.add(
                FloorMachine(machine_id="A-1", bank_name="A", position=1,
                             endpoint="sas+tcp://127.0.0.1:7001?address=1", updated_at=now)
            )  # fmt: skip
            for name in ("technician", "director", "desk", "promotion-director"):
                await service.add_user(session, name, name, PASSWORD, actor="tests", now=now)
                _, tokens[name] = await service.create_token(
                    session, name, role=None, expires_at=now + timedelta(days=1),
                    label="cli", actor="tests", now=now,
                )  # fmt: skip
    finally:
        await engine.dispose()
    return tokens


@pytest.fixture
def tokens(database: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    cheap_hashes(monkeypatch)
    return asyncio.run(_seed(database))


def test_the_technicians_floor_rows_through_the_api(
    database: str,
    tokens: dict[str, str],
    api: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database, api, capsys)
    monkeypatch.setenv("REELGATE_TOKEN", tokens["technician"])
    capsys.readouterr()
    from gateway.app.cli import main

    code = main(["bank", "add-machine", "A", "A-2", "--endpoint",
                 "sas+tcp://127.0.0.1:7002?address=2", "--server", api])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert "machine A-2 added to bank A at position 2" in capsys.readouterr().out
    code = main(["bank", "move-machine", "A-1", "--to", "B", "--server", api])
    assert code == 0, capsys.readouterr().err
    assert "machine A-1 now in bank B at sas+tcp://127.0.0.1:7001?address=1" in (
        capsys.readouterr().out
    )
    assert _actors(database, "floor.add-machine") == ["technician"]
    assert _actors(database, "floor.move-machine") == ["technician"]
    assert "unknown scheme" in cli.fails("bank", "add-machine", "A", "A-3",
                                         "--endpoint", "ftp://127.0.0.1:21")  # fmt: skip
    # Driving the machines needs the gateway serving the bank: one line saying so.
    for argv in (["check", "A"], ["enable", "A"], ["disable", "A"]):
        err = cli.fails("bank", *argv)
        assert "bank A: this API runs without the gateway (reelgate api)" in err, err
    monkeypatch.setenv("REELGATE_TOKEN", tokens["desk"])
    assert "permission: role desk may not bank.floor" in cli.fails(
        "bank", "move-machine", "A-2", "--to", "B"
    )


def test_desk_registers_disqualifications_and_super9_settings_through_the_api(
    database: str,
    tokens: dict[str, str],
    api: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cli = Cli(database, api, capsys)
    cli.direct("tournament", "create", "Ridge")
    cli.direct("players", "add", "--id-number", ANN, "--name", "Ann", "--dob", "1980-01-01")
    cli.direct("entries", "sell", ANN, "-t", "Ridge")
    register = tmp_path / "register.csv"
    register.write_text(
        "kind,id_number,name,valid_from,valid_until,note\n"
        "self-exclusion,7001015009080,Someone,2026-01-01,,\n"
    )
    monkeypatch.setenv("REELGATE_TOKEN", tokens["desk"])
    loaded = cli.ok("players", "import-exclusions", str(register))
    assert loaded == {"added": 1, "disqualified": []}
    assert _actors(database, "exclusion.import") == ["desk"]
    bad = tmp_path / "bad.csv"
    bad.write_text("kind,id_number,valid_from\ngrudge,7001015009080,2026-01-01\n")
    assert "exclusion CSV line 2: kind 'grudge'" in cli.fails("players", "import-exclusions",
                                                             str(bad))  # fmt: skip
    assert "permission: role desk may not player.disqualify" in cli.fails(
        "players", "disqualify", ANN, "-t", "Ridge", "--rule", "23", "--reason", "abusive"
    )
    monkeypatch.setenv("REELGATE_TOKEN", tokens["director"])
    dq = cli.ok("players", "disqualify", ANN, "-t", "Ridge", "--rule", "23", "--reason", "abusive")
    assert dq["rule"] == 23
    assert _actors(database, "player.disqualify") == ["director"]
    monkeypatch.setenv("REELGATE_TOKEN", tokens["promotion-director"])
    capsys.readouterr()
    from gateway.app.cli import main

    assert main(["super9", "set", "buy_in_cents=6000", "verification_fields=name,id",
                 "--reason", "December", "--server", api]) == 0  # fmt: skip
    assert capsys.readouterr().out.splitlines() == [
        "buy_in_cents = 6000",
        "verification_fields = ['name', 'id']",
    ]
    assert _actors(database, "super9.settings") == ["promotion-director"]
    assert "settings: jackpot_spins below 9" in cli.fails(
        "super9", "set", "jackpot_spins=5", "--reason", "x"
    )
